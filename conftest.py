pytest_plugins = ["fixtures.plugin.hooks", "pytester"]  # the harness plugin (`-p cute_dsl_harness` names the same module: loaded once); pytester: tests/
