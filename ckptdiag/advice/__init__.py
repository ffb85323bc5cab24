"""Advice: what to change, from a diagnosis and the settings in force."""
