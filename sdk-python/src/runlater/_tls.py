"""TLS settings of an https:// client: the CA it trusts and the certificate it presents.

The files are read and checked when the client is made, so a wrong path or a file that is
not what it should be fails there, naming the file, rather than at the first call with a
message from deep inside the HTTP stack. The checks use the standard library's ssl module
(pyqwest's own errors do not say which file is at fault); pyqwest then gets the PEM bytes.
"""

from __future__ import annotations

import os
import ssl
from dataclasses import dataclass, field
from typing import TypedDict

# Shared by every SDK and the CLI: keep the names in step with theirs.
CA_ENV = "RUNLATER_TLS_CA"
CERT_ENV = "RUNLATER_TLS_CERT"
KEY_ENV = "RUNLATER_TLS_KEY"


@dataclass(frozen=True)
class Tls:
    """PEM material for pyqwest; the repr shows the file paths only.

    ca_file: the CA (bundle) that signs the server's certificate; None: the system trust
        store. When given, it is the only one trusted.
    cert_file, key_file: the client certificate and its key, for servers that ask for one
        (mutual TLS); both or neither.
    """

    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    ca: bytes | None = field(default=None, repr=False)
    cert: bytes | None = field(default=None, repr=False)
    key: bytes | None = field(default=None, repr=False)

    def transport_args(self) -> TransportArgs:
        """The TLS keyword arguments of pyqwest's transports."""
        args: TransportArgs = (
            {"tls_ca_cert": self.ca} if self.ca is not None else {"tls_include_system_certs": True}
        )
        if self.cert is not None:
            args["tls_cert"] = self.cert
            args["tls_key"] = self.key
        return args


class TransportArgs(TypedDict, total=False):
    tls_ca_cert: bytes | None
    tls_include_system_certs: bool
    tls_cert: bytes | None
    tls_key: bytes | None


PathArg = str | os.PathLike[str] | None


def load(ca: PathArg, cert: PathArg, key: PathArg) -> Tls:
    """Reads and checks the files; a None argument falls back to its environment variable.

    Raises ValueError naming the option (and the variable it came from) and the file.
    """
    ca_src = _Source("tls_ca", ca, CA_ENV)
    cert_src = _Source("tls_cert", cert, CERT_ENV)
    key_src = _Source("tls_key", key, KEY_ENV)
    if (cert_src.path is None) != (key_src.path is None):
        given, missing = (cert_src, key_src) if cert_src.path else (key_src, cert_src)
        raise ValueError(
            f"{given.label()} was given without {missing.name} (or {missing.env}): "
            "a client certificate needs its key, and the reverse"
        )
    probe = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ca_pem = ca_src.read()
    if ca_src.path is not None:
        _check_certificates(probe, ca_src)
    cert_pem = cert_src.read()
    key_pem = key_src.read()
    if cert_src.path is not None and key_src.path is not None:
        _check_certificates(probe, cert_src)
        _check_key(probe, cert_src, key_src)
    return Tls(ca_src.path, cert_src.path, key_src.path, ca_pem, cert_pem, key_pem)


@dataclass(frozen=True)
class _Source:
    """One option: its name, the path given (or else from its environment variable)."""

    name: str
    given: PathArg
    env: str

    @property
    def path(self) -> str | None:
        if self.given is not None:
            return os.fspath(self.given) or None
        return os.environ.get(self.env, "").strip() or None

    def label(self) -> str:
        origin = "" if self.given is not None else f" from {self.env}"
        return f"{self.name}{origin} {self.path!r}"

    def read(self) -> bytes | None:
        if self.path is None:
            return None
        try:
            with open(self.path, "rb") as f:
                return f.read()
        except OSError as err:
            raise ValueError(f"{self.label()}: cannot read it: {err.strerror}") from err


def _check_certificates(probe: ssl.SSLContext, src: _Source) -> None:
    try:
        probe.load_verify_locations(cafile=src.path)
    except ssl.SSLError as err:
        raise ValueError(
            f"{src.label()}: no PEM certificate in it ({err.reason}); "
            "it must hold -----BEGIN CERTIFICATE----- blocks"
        ) from err


class _EncryptedKey(Exception):
    pass


def _no_password() -> str:
    # Called by OpenSSL only for an encrypted key; without it OpenSSL would prompt on the tty.
    raise _EncryptedKey


def _check_key(probe: ssl.SSLContext, cert: _Source, key: _Source) -> None:
    try:
        probe.load_cert_chain(cert.path or "", key.path, password=_no_password)
    except _EncryptedKey as err:
        raise ValueError(
            f"{key.label()}: the key is encrypted; give it unencrypted (PEM, PKCS#8)"
        ) from err
    except ssl.SSLError as err:
        if err.reason == "KEY_VALUES_MISMATCH":
            raise ValueError(
                f"{key.label()} is not the key of the certificate in {cert.label()}"
            ) from err
        raise ValueError(
            f"{key.label()}: no PEM private key in it"
            + (f" ({err.reason})" if err.reason else "")
            + "; it must hold a -----BEGIN PRIVATE KEY----- block (PKCS#8)"
        ) from err
