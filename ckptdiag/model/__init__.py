"""The vocabulary every stage shares, below the pipeline: the metric catalogue (serverStatus paths
and their renames), the server's facts, the settings in force, the time window, a disk's counters
and iostat's figures, the host's CPU time names, mongod's log events. Any stage may import it; it
imports no stage."""
