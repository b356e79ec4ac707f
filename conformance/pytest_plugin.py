"""pytest plugin entry point (``pytest11``); imports nothing heavy until used."""
