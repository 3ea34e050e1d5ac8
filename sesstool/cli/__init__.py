"""CLI ring: one small click module per subcommand; main.py holds the one exit boundary."""
