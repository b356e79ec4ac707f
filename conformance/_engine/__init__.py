"""The harness's engine: what gets certified (``subject``), what a run is asked to do
(``config``, ``RunConfig``), the harness's own errors (``errors``), the check registry and run
order (``registry``), running checks against one subject (``runner``) or several (``schedule``), the
data checks share (``providers``), the results and their certificate (``report``) and how they
read (``render``), hypothesis profiles, golden files, and the one rule values are compared by
(``canonical``). It imports no check: the families in ``conformance._checks`` import it."""
