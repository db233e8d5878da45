"""Code several systems share; every module is importable without network or credentials.

Nothing is re-exported here on purpose: a handler imports only the modules it uses, so a
function that never calls Bedrock never pays for pydantic, and none pays for boto3 before
its first AWS call.
"""
