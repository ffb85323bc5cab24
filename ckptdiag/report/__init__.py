"""Reports: renderers for the terminal, pipes (JSON) and files."""
