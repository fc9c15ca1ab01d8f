"""Test certificates: a throw-away CA and server certificates signed by it (valid, expired, wrong host).

Used by the TLS tests of the WebSocket client and the HTTP client. Run as a script to write a set into a folder:

    python Tests/tools/certs.py OUT_DIR [--host localhost] [--expired]

It writes ca.pem, server.pem (certificate chain) and server.key and prints their paths as JSON.
"""
from __future__ import annotations

import argparse
import datetime as dt
import ipaddress
import json
import os
from dataclasses import dataclass

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


@dataclass
class CertFiles:
    ca: str
    cert: str
    key: str


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def make_ca(common_name: str = "directus-bridge test CA"):
    key = ec.generate_private_key(ec.SECP256R1())
    now = dt.datetime.now(dt.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(common_name))
        .issuer_name(_name(common_name))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=30))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                     content_commitment=False, key_encipherment=False, data_encipherment=False,
                                     key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
        .sign(key, hashes.SHA256())
    )
    return cert, key


def make_server_cert(ca_cert, ca_key, hosts: list[str], expired: bool = False):
    key = ec.generate_private_key(ec.SECP256R1())
    now = dt.datetime.now(dt.timezone.utc)
    if expired:
        not_before, not_after = now - dt.timedelta(days=10), now - dt.timedelta(days=1)
    else:
        not_before, not_after = now - dt.timedelta(days=1), now + dt.timedelta(days=30)
    alt_names: list[x509.GeneralName] = []
    for host in hosts:
        try:
            alt_names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            alt_names.append(x509.DNSName(host))
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(hosts[0]))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before)
        .not_valid_after(not_after)
        .add_extension(x509.SubjectAlternativeName(alt_names), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    return cert, key


def write_set(out_dir: str, hosts: list[str], expired: bool = False, prefix: str = "") -> CertFiles:
    """Writes a fresh CA and a server certificate for `hosts` into `out_dir`; returns the paths."""
    os.makedirs(out_dir, exist_ok=True)
    ca_cert, ca_key = make_ca()
    cert, key = make_server_cert(ca_cert, ca_key, hosts, expired=expired)
    files = CertFiles(
        ca=os.path.join(out_dir, f"{prefix}ca.pem"),
        cert=os.path.join(out_dir, f"{prefix}server.pem"),
        key=os.path.join(out_dir, f"{prefix}server.key"),
    )
    with open(files.ca, "wb") as f:
        f.write(ca_cert.public_bytes(serialization.Encoding.PEM))
    with open(files.cert, "wb") as f:
        f.write(cert.public_bytes(serialization.Encoding.PEM))
    with open(files.key, "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption()))
    return files


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out_dir")
    parser.add_argument("--host", action="append", default=None)
    parser.add_argument("--expired", action="store_true")
    args = parser.parse_args()
    result = write_set(args.out_dir, args.host or ["localhost", "127.0.0.1"], expired=args.expired)
    print(json.dumps(result.__dict__))
