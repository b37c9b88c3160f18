"""The small steps that tidy any generated function (cleanup.py): coalesce-copies,
propagate-copies, tidy, drop-dead, while-condition, drop-lonely-comments,
free-after-last-use; block_index.py answers propagate-copies' "where is x bound next?".
"""
