"""Helpers shared by bench/torch_core.py and bench/torch_extension.py.

Both scripts run as `python3 bench/<script>.py`; each puts its own directory on
sys.path before `import bench_common`.
"""
import json
import sys


def log(msg):
    """One progress line on stderr (stdout carries the JSON result)."""
    print(msg, file=sys.stderr, flush=True)


def emit(obj):
    """One JSON object as a line on stdout, flushed."""
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()
