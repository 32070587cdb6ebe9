"""The console's shell: layout, static files, identity and the translation of domain errors."""
