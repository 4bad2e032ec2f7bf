"""Small example data shipped with rubriclab (read with ``importlib.resources``)."""
