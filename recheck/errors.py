"""The one domain error type. The API, the admin and the commands turn it into a clear message,
so its text says what is wrong and what to do."""


class RecheckError(Exception):
    pass


class ResolutionError(RecheckError):
    """A status change that cannot be made."""


class BundleError(RecheckError):
    """A review bundle that cannot be imported. `field` names the offending field."""

    def __init__(self, field: str, message: str):
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}" if field else message)
