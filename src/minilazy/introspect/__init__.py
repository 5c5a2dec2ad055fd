"""Looking at graphs: printers, Python code, the debugger, the metrics report, the reference."""
