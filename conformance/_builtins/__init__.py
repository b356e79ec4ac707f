"""The built-in serializers as subjects (``subjects``; ``conformance certify --builtins``),
serializers written the way users write theirs (``user_serializers``), and the golden files of
every release of this project (``golden/``)."""
