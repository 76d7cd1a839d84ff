"""A report's ``junit.xml``, counting what summary.md, results.json and the verdict line count.

JUnit has no word for an expected failure; pytest's writer files each xfail under ``skipped``
(``type="pytest.xfail"``), so its ``skipped`` was the report's skipped and xfailed together.
Here an xfailed case is a case that ran and did what its strict xfail asserts (the known DSL
defect is still there): a testcase with no ``skipped``, named by its ``xfailed`` property (the
reason), and the testsuite's ``xfailed`` property counts them. ``skipped`` counts skips alone.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from xml.etree import ElementTree

from reports.model import CaseResult, RunResult

XFAILED = "xfailed"  # the property that names an expected failure, on its testcase and (a count) on the suite


def named_xfails(xml: bytes) -> bytes:
    """pytest's junit.xml with each xfail a testcase that ran, named ``xfailed``, and every
    testsuite's counts those of its testcases."""
    root = ElementTree.fromstring(xml)
    for suite in root.iter("testsuite"):
        for testcase in suite.iter("testcase"):
            xfail = next((e for e in testcase.findall("skipped") if e.get("type") == "pytest.xfail"), None)
            if xfail is not None:
                testcase.remove(xfail)
                _property(testcase, XFAILED, xfail.get("message", ""), first=True)
        _count(suite)
    return ElementTree.tostring(root, encoding="utf-8", xml_declaration=True)


def from_run(run: RunResult, where: Callable[[CaseResult], str] = lambda case: str(case.source)) -> bytes:
    """junit.xml of ``run``'s cases (a merged run's, or a run whose pytest never wrote its own);
    ``where`` tells apart the cases of one node id (a merge's: by GPU model and install)."""
    suite = ElementTree.Element("testsuite", name="cute-dsl-harness", timestamp=run.started, hostname=run.host,
                                time=f"{sum(c.duration_s for c in run.cases):.3f}")
    seen = Counter(c.nodeid for c in run.cases)
    for case in run.cases:
        path, _, test = case.nodeid.partition("::")
        element = ElementTree.SubElement(suite, "testcase", classname=path.removesuffix(".py").replace("/", "."),
                                         name=test if seen[case.nodeid] == 1 else f"{test} [{where(case)}]",
                                         time=f"{case.duration_s:.3f}")
        if case.outcome in ("failed", "xpassed", "error"):
            tag = "error" if case.outcome == "error" else "failure"
            ElementTree.SubElement(element, tag, message=case.message.splitlines()[0] if case.message else case.outcome
                                   ).text = case.message
        elif case.outcome == "skipped":
            ElementTree.SubElement(element, "skipped", type="pytest.skip", message=case.reason)
        elif case.outcome == XFAILED:
            _property(element, XFAILED, case.reason)
    _count(suite)
    root = ElementTree.Element("testsuites")
    root.append(suite)
    return ElementTree.tostring(root, encoding="utf-8", xml_declaration=True)


def _property(element: ElementTree.Element, name: str, value: str, first: bool = False) -> None:
    properties = element.find("properties")
    if properties is None:
        properties = ElementTree.Element("properties")
        element.insert(0, properties)
    prop = ElementTree.Element("property", name=name, value=value)
    properties.insert(0, prop) if first else properties.append(prop)


def _count(suite: ElementTree.Element) -> None:
    """The suite's counts from its testcases: one outcome each, a failure before an error (a
    failed call whose teardown errs too is one failed case, as results.json has it)."""
    outcomes = Counter()
    for testcase in suite.iter("testcase"):
        kinds = {child.tag for child in testcase}
        xfailed = any(p.get("name") == XFAILED for p in testcase.iter("property"))
        outcome = next((k for k in ("failure", "error", "skipped") if k in kinds), XFAILED if xfailed else "passed")
        outcomes[outcome] += 1
    suite.set("tests", str(sum(outcomes.values())))
    suite.set("failures", str(outcomes["failure"]))
    suite.set("errors", str(outcomes["error"]))
    suite.set("skipped", str(outcomes["skipped"]))
    properties = [p for p in suite.findall("properties/property") if p.get("name") == XFAILED]
    if properties:
        properties[0].set("value", str(outcomes[XFAILED]))
    elif outcomes[XFAILED]:
        _property(suite, XFAILED, str(outcomes[XFAILED]))
