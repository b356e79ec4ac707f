"""The fresh-process restore (check ``backends.fresh_process``): the harness's side
(``process``), the child that restores in a process that never saw the writer's state
(``restore``, run as ``python -m conformance._fresh.restore``), and the states both sides know
(``layout``). The child imports only the reference library and this package: nothing here may
import hypothesis or the engine."""
