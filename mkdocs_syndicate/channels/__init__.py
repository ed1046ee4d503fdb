"""Channel clients, one module per service behind `base.Channel`; `registry.TYPES` names them
(`registry.clients()`: every client class by type name, loaded on first use)."""
