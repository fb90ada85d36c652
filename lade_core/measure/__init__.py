"""Measurements beside the engine: bench (greedy against lookahead on a prompt set), the cost curve (forward latency
against tokens fed), the sweep (compression over W and N), Auto (W, N, G for a device) and the speed lab (a hardware
cost model and a simulation of Lookahead Parallelism). They import the engine; the engine never imports them. Each
takes typed arguments and returns plain data; the command line (`lade_core/cli.py`) prints and saves it.
"""
