"""Pydantic models of every method's params and result: the single source of protocol/.

One module per area; `make protocol` reads them through the method table in promptd.methods.
Domain layer neutral: these are plain data models and import nothing from promptd.rpc.
"""
