"""The shapes of the API's answers, generated from its OpenAPI document (TypedDicts: plain dicts at run time,
checked by a type checker), for annotating your own code: ``task: Task = client.tasks.get(task_id)``."""
from ._generated import *  # noqa: F401,F403
from ._generated import __all__  # noqa: F401
