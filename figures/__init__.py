"""Plotting, one module per figure family. Reads results; never trains or integrates."""
