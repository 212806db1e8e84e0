"""The Content-Security-Policy in a real browser: the bpmn-js diagram page draws the process and
marks nothing as violating the policy (Debian's chromium through Playwright)."""

from __future__ import annotations

from ..conftest import PASSWORD


def test_the_process_diagram_draws_under_the_csp_without_violations(browser, live_server):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    messages: list[str] = []
    page.on("console", lambda message: messages.append(message.text))
    page.goto(f"{live_server}/login")
    page.fill("[name=username]", "sec")
    page.fill("[name=password]", PASSWORD)
    page.click("form [type=submit]")
    page.wait_for_load_state()
    page.add_init_script("""window.__violations = [];
        document.addEventListener('securitypolicyviolation', e => window.__violations.push(
            e.violatedDirective + ' ' + e.blockedURI));""")
    response = page.goto(f"{live_server}/processes/current")
    assert "script-src 'self'" in response.headers["content-security-policy"]
    page.wait_for_selector("#diagram[data-rendered]", timeout=20000)
    assert page.get_attribute("#diagram", "data-rendered") == "true"
    # the Rule 130 process is drawn: its user tasks are SVG shapes
    assert page.locator("[data-element-id=ut_publish_notice]").count() == 1
    violations = page.evaluate("() => window.__violations || []")
    assert not violations, violations
    assert not [m for m in messages if "Content Security Policy" in m], messages
    # the policy is enforced and the listener hears it: an inline style is refused and reported
    page.evaluate("() => document.body.setAttribute('style', 'background: red')")
    page.wait_for_function("() => window.__violations.length > 0")
    assert page.evaluate("() => window.__violations")[0].startswith("style-src")
    context.close()


def test_the_diagram_is_drawn_with_hindi_labels_on_a_hindi_page(browser, live_server):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(f"{live_server}/login")
    page.fill("[name=username]", "sec")
    page.fill("[name=password]", PASSWORD)
    page.click("form [type=submit]")
    page.wait_for_load_state()
    page.click("#language button[name=lang][value=hi]")
    page.wait_for_load_state()
    page.goto(f"{live_server}/processes/current")
    page.wait_for_selector("#diagram[data-rendered]", timeout=20000)
    assert page.get_attribute("#diagram", "data-rendered") == "true"
    label = page.locator("[data-element-id=ut_publish_notice] text").text_content()
    assert "सूचना" in label and "notice" not in label.lower(), label
    context.close()
