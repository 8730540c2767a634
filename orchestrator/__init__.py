"""The moonpool orchestrator: rigs, executions, adapters, recording and the CLI.

Read in this order (docs/architecture.md draws the picture):

- ``rig.py``        typed, frozen description of a run (``rigfile/`` parses TOML into it)
- ``execution.py``  the master algorithm: multi-rate int64-ns time, Jacobi / Gauss-Seidel
- ``adapters/``     how a component is reached: in-process, child process, remote endpoint
- ``recording/``    observers: the MCAP recording (crash-safe), the stream digest,
                    reading and recovering recordings
- ``run.py``        one run end to end: outputs folder, summary.json, plots
- ``cli.py``        the ``moonpool`` command
"""
