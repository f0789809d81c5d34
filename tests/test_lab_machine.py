"""The machine facts a lab run records beside its numbers."""

from __future__ import annotations

import os
import platform

from lesson_lib.lab.machine import local_facts


def test_local_facts_describe_this_machine():
    facts = local_facts()
    assert set(facts) == {
        "host",
        "cpu",
        "logical_cores",
        "usable_cores",
        "llc_bytes",
        "load_1min",
        "os",
        "python",
    }
    assert facts["python"] == platform.python_version()
    assert facts["logical_cores"] == (os.cpu_count() or 1)
    assert 1 <= facts["usable_cores"] <= facts["logical_cores"]
    assert facts["cpu"] and facts["cpu"] != ""
    assert facts["llc_bytes"] is None or facts["llc_bytes"] > 0
    assert facts["os"].startswith(platform.system())
