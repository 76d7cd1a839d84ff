"""The harness's own tests drive the real plugin in throwaway copies of the project."""

pytest_plugins = ["pytester"]
