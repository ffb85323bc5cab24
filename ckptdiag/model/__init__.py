"""The vocabulary every stage shares, below the pipeline: a disk's counters and iostat's figures,
the host's CPU time names, mongod's log events. Any stage may import it; it imports no stage."""
