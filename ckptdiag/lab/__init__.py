"""The lab: a real WiredTiger engine configured as mongod configures it, stalling on demand."""
