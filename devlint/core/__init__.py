"""The device-provenance analysis: domain, binder, the LibCST pass and the torch API table."""
