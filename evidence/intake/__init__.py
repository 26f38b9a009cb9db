"""The one intake pipeline: every entry point (form, CLI, browser batch) feeds it.

``steps`` holds the CPU work done per file in worker processes (no database there);
``sources`` turns a folder, a ZIP or uploads into ``SourceFile`` specs; ``pipeline``
runs the steps in parallel and writes the results in batched transactions.
"""
