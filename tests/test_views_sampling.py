"""The shipped sampled run (assets/runs/code-fib-t0.7-W7N4G7.json) in the views, without a server: the verification
view lists every draw of a step as the trace has it (token, p, u, verdict u < p, mass left), the token drawn after
them, and the rule; a greedy run's verification view keeps its candidate / model-says table; the notes and the API
summary do not claim that a sampled lookahead run equals the plain one."""

import html
import re

from conftest_app import recorded_runs

from app import api, events, replay, views
from app.views.common import cell_text
from app.views.verify import SAMPLING_RULE, percent

RUNS = dict(recorded_runs())
SAMPLED = RUNS["code-fib-t0.7-W7N4G7"]
GREEDY = RUNS["code-fib-W7N4G7"]
ROW = re.compile(r'<tr class="draw (accepted|rejected)"><td>(\d+)</td><td>c(\d+)</td><td>(\d+)</td>'
                 r'<td class="token">(.*?)</td><td class="p">(.*?)</td><td class="u">(.*?)</td><td[^>]*>(.*?)</td>'
                 r'<td>(.*?)</td></tr>')


def _draw_steps(run):
    return [s for s in run.lookahead.steps if s.draws]


def test_the_sampled_run_samples_and_accepts_several_tokens_per_step():
    s = SAMPLED.sampling
    assert (s.temperature, s.top_k, s.top_p, s.seed) == (0.7, 0, 1.0, 0)
    assert SAMPLED.config.pool_from_prompt and SAMPLED.max_new_tokens == 64
    steps = _draw_steps(SAMPLED)
    assert any(len(st.accepted) > 1 for st in steps)
    assert any(d.accepted for st in steps for d in st.draws) and any(not d.accepted for st in steps for d in st.draws)
    for st in steps:  # the trace itself: the verdict is u < p, the mass before the first offer at a position is 1
        assert all(d.accepted == (d.uniform < d.prob) for d in st.draws)


def test_verify_view_lists_each_draw_as_in_the_trace():
    # a step with a rejection at one position and then an acceptance there: residual mass below 1 shows
    step = next(st for st in _draw_steps(SAMPLED) if any(d.accepted and d.residual_mass < 1 for d in st.draws))
    page = views.verify_html(SAMPLED, step.index)
    rows = ROW.findall(page)
    assert len(rows) == len(step.draws)
    for n, (row, d) in enumerate(zip(rows, step.draws), 1):
        verdict, number, cand, pos, token, p, u, said, mass = row
        assert (int(number), int(cand), int(pos)) == (n, d.candidate + 1, d.position)
        assert token == cell_text(SAMPLED, d.token, 14)
        assert p == html.escape(percent(d.prob)) and u == f"{d.uniform:.3f}"
        assert mass == html.escape(percent(d.residual_mass))
        assert verdict == ("accepted" if d.uniform < d.prob else "rejected")
        assert said == ("u &lt; p: accepted" if verdict == "accepted" else "u ≥ p: rejected")
    final = re.search(r'<div class="final-draw">(.*?)</div>', page).group(1)
    assert f'<span class="chip bonus">{cell_text(SAMPLED, step.accepted[-1], 14)}</span>' in final
    assert ("from the residual" in final) == (not step.draws[-1].accepted)
    assert SAMPLING_RULE in page
    assert f"★ candidate {step.winner + 1}" in page and "model says" not in page


def test_every_sampled_step_shows_all_its_draws_and_the_drawn_token():
    for step in _draw_steps(SAMPLED):
        page = views.verify_html(SAMPLED, step.index)
        assert len(ROW.findall(page)) == len(step.draws)
        chips = re.findall(r'<span class="chip (?:added|bonus)"[^>]*>([^<]*)</span>',
                           re.search(r'Accepted this step: (.*?)</div>', page).group(1))
        assert chips == [cell_text(SAMPLED, t, 14) for t in step.accepted]
        after_full_match = step.draws[-1].accepted
        assert ("after the fully accepted candidate" in page) == after_full_match


def test_percent():
    assert (percent(0.0), percent(0.00001), percent(0.1348), percent(1.0)) == ("0.00%", "<0.01%", "13.48%", "100.00%")


def test_greedy_verify_view_is_unchanged():
    for step in GREEDY.lookahead.steps:
        assert not step.draws
        page = views.verify_html(GREEDY, step.index)
        assert 'class="verify draws"' not in page and "final-draw" not in page and SAMPLING_RULE not in page
        if step.candidates:
            assert page.count("model says") == len(step.candidates)
    page = views.verify_html(GREEDY, replay.interesting_step(GREEDY))
    assert "the bonus token)" in page and "the drawn token" not in page


def test_notes_and_panels_say_a_sampled_run_differs_from_plain_sampling():
    note = views.honest_note_md(SAMPLED)
    assert "This run samples" in note and "differ in general" in note and "plain sampling" in note
    assert "identical" not in note and "same text" not in note
    greedy_note = views.honest_note_md(GREEDY)
    assert "This run samples" not in greedy_note and "plain sampling" not in greedy_note
    assert "Autoregressive (sampling, T=0.7)" in views.ar_output_html(SAMPLED, 3)
    assert "Autoregressive (greedy)" in views.ar_output_html(GREEDY, 3)
    assert "Sampling: steps=" in views.counter_text(SAMPLED, 3) and "Greedy: steps=" in views.counter_text(GREEDY, 3)
    assert "sampling at temperature 0.7, top-p 1, seed 0" in events.describe(SAMPLED)


def test_api_summary_reports_exact_only_for_greedy_runs():
    sampled = api.summary(SAMPLED, True, SAMPLED.text)
    assert sampled["exact"] is None
    assert sampled["sampling"] == {"greedy": False, "temperature": 0.7, "top_p": 1.0, "seed": 0}
    greedy = api.summary(GREEDY, True, GREEDY.text)
    assert greedy["exact"] is True and greedy["sampling"]["greedy"] is True


def test_opening_a_sampled_run_sets_the_sampling_controls():
    out = events.open_run(SAMPLED, 5)
    assert len(out) == events.OPEN_RUN_OUTPUTS
    assert out[3:11] == (7, 4, 7, 64, True, 0.7, 1.0, 0)
    assert events.open_run(GREEDY, 5)[8:11] == (0.0, 1.0, 0)
