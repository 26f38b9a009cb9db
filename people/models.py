"""Witnesses, victims and sources; testimony and consent (to come)."""
