"""The browser tests' own tool (issue 52): a wait for the page that runs out says where the page was (the stage's
state, its status lines and alerts, the page's last errors), where a bare TimeoutError said nothing of it."""

import pytest
from conftest_app import new_page, open_app
from playwright.sync_api import TimeoutError as PlaywrightTimeout

pytestmark = [pytest.mark.server, pytest.mark.browser]


def test_a_wait_that_runs_out_says_where_the_page_was(chromium, page_server):
    page = new_page(chromium)
    open_app(page, page_server[0] + "?lesson=3", "s.state.mode === 'lesson'")
    with pytest.raises(PlaywrightTimeout) as ran_out:
        page.wait_for_function("() => window.ladeStage.state.mode === 'lab'", timeout=500)
    said = str(ran_out.value)
    assert '"mode":"lesson"' in said and '"chapter":3' in said and "its errors: []" in said, said
    page.close()
