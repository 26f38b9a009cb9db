"""Evidence items, stored originals, provenance and chain of custody (to come)."""
