pytest_plugins = ["fixtures.plugin.hooks", "pytester"]  # the harness plugin (installed: the same name, loaded once); pytester: tests/
