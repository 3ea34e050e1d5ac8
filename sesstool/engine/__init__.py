"""Engine: one entry point per command, composing the store (read) and the core (scan/plan).

Entry points take a frozen request and return a frozen report; they never print.
"""
