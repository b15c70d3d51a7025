"""The TLS fixtures of tls_certs.py, for the tests of this folder."""

from tls_certs import tls_files, tls_mariadb  # noqa: F401
