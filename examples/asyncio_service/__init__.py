"""A small HTTP API on Cassandra, served by uvicorn, with the driver and the usual hand-written asyncio
bridge or with ``pyfactories.enable`` and ``await``; and a load generator that compares the two
(``load.py``). How to run both, and a run's figures: README.md beside this file."""
