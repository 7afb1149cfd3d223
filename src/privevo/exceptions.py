"""Warnings and errors of privevo."""


class PrivacyLeakWarning(RuntimeWarning):
    """A public parameter was taken from the private data: the run is not DP.

    Follows diffprivlib's convention: the run still completes, but its privacy
    report says the guarantee does not hold.
    """


class InvalidParameterError(ValueError, TypeError):
    """A constructor parameter is outside its declared constraints (one line, what to fix).

    A ``ValueError`` and a ``TypeError``, as scikit-learn's error of the same name.
    """
