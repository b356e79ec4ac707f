"""The harness's engine: what gets certified (``subject``), the check registry and run order
(``registry``), running checks against one subject (``runner``) or several (``schedule``), the
data checks share (``providers``), the results and their certificate (``report``) and how they
read (``render``), hypothesis profiles, golden files, and the one rule values are compared by
(``canonical``). It imports no check: the families in ``conformance._checks`` import it."""
