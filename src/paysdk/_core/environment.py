"""The environment variables paysdk reads, by name, in one place: the client's configuration reads
them, and the command line and the testing kit name them in their help and output. Nothing is
imported here, so naming them loads no HTTP client."""

ENV_SECRET_KEY = "PAYSDK_SECRET_KEY"  # noqa: S105 - the variable's name, not a key
ENV_BASE_URL = "PAYSDK_BASE_URL"
ENV_TIMEOUT = "PAYSDK_TIMEOUT"
ENV_MAX_RETRIES = "PAYSDK_MAX_RETRIES"
ENV_LOG = "PAYSDK_LOG"
