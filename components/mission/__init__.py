"""The mission manager of the hadal recovery (seed 003): ``manager.py`` (the component
``mission.manager``), ``phases.py`` (the behaviour tree), ``context.py`` (what it knows)."""
