"""A Directus-compatible server for the bridge's tests, benchmarks and demo.

It follows the project's docs/directus-protocol.md (sections are cited as `§N.M` in comments). Everything lives in
memory; see README.md in this folder for the seed data and the `/_emulator/*` control API.
"""
