"""Priming prefixes (helpers.data.priming): exact checks on tiny pools written here, and a real
BLiMP + WikiText sample with the tiny-gpt2 tokenizer against the engine's own encoding."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from helpers import data
from helpers.data import priming
from helpers.data.selection import first_per_paradigm
from helpers.engine import Request, CausalScorer

KEYS = ["paradigm", "pair_id", "prefix_type", "target_length", "draw"]
LENGTHS = (0, 4, 10, 16)
SPLIT = re.compile(r"(?<=[.?!]) (?=\S)")


def words(text: str) -> int:
    return len(text.split())


def joins(text: str) -> int:
    """Not additive: every join after a sentence's final mark costs a token of its own."""
    return len(text.split()) + len(SPLIT.findall(text))


def merges(text: str) -> int:
    """Not additive the other way: every join saves a token."""
    return len(text.split()) - len(SPLIT.findall(text))


def sentences(prefix: str) -> list[str]:
    return SPLIT.split(prefix) if prefix else []


def tiny_pool(per: int = 6) -> pd.DataFrame:
    """Three paradigms of ``per`` pairs; four words a sentence; some lack their period."""
    rows = [{"paradigm": p, "phenomenon": "ph_a" if p != "p3" else "ph_b", "pair_id": i,
             "good": f"{p} good {i} {'w?' if i % 3 == 0 else 'w' if i % 3 == 1 else 'w.'}",
             "bad": f"{p} bad {i} w.", "item": i // 2}
            for p in ("p1", "p2", "p3") for i in range(per)]
    return pd.DataFrame(rows)


WIKI = [f"wiki sentence number {i}." for i in range(12)]


@pytest.fixture(scope="module")
def built():
    pool = tiny_pool()
    return pool, priming.build_prefixes(pool, words, unrelated=WIKI, lengths=LENGTHS, draws=2, seed=7)


def test_as_sentence_and_join():
    assert priming.as_sentence("  The cat  sat ") == "The cat sat."
    assert priming.as_sentence("Who left?") == "Who left?"
    assert priming.as_sentence('He said "go."') == 'He said "go."'
    assert priming.as_sentence("(see below.)") == "(see below.)"
    assert priming.as_sentence("A list:") == "A list:."
    assert priming.join(["One", "Two.", "Three?"]) == "One. Two. Three?"


def test_rows_columns_and_labels(built):
    pool, df = built
    assert list(df.columns) == priming.COLUMNS
    # 5 types x 3 lengths x 2 draws, and one no-prefix row (the baseline) per pair
    assert len(df) == len(pool) * (len(priming.PREFIX_TYPES) * 3 * 2 + 1)
    assert not df.duplicated(KEYS).any()
    empty = df[df.target_length == 0]
    assert len(empty) == len(pool) and (empty.draw == 0).all()
    assert (empty.prefix == "").all() and (empty.actual_length == 0).all() and (empty.n_sentences == 0).all()
    assert set(empty.prefix_type) == set(empty.domain) == set(empty.acceptability) == {priming.NO_PREFIX}
    full = df[df.target_length > 0]
    expected = full.prefix_type.map(priming.PREFIX_TYPES)
    assert (full.domain == expected.str[0]).all() and (full.acceptability == expected.str[1]).all()
    assert (df.seed == 7).all() and set(df.draw) == {0, 1}
    assert not df.capped.any() and not df.exhausted.any()
    assert (df.actual_length == df.prefix.map(words)).all()
    assert (df.n_sentences == df.prefix.map(lambda p: len(sentences(p)))).all()


def test_sentences_come_from_the_right_pool_and_never_from_the_target(built):
    pool, df = built
    side = {}
    for r in pool.itertuples():
        side[priming.as_sentence(r.good)] = (r.paradigm, "acceptable")
        side[priming.as_sentence(r.bad)] = (r.paradigm, "unacceptable")
    side |= {s: ("wiki", "acceptable") for s in WIKI}
    own = {(r.paradigm, r.pair_id): {priming.as_sentence(r.good), priming.as_sentence(r.bad)}
           for r in pool.itertuples()}
    for r in df[df.target_length > 0].itertuples():
        got = sentences(r.prefix)
        assert len(got) == len(set(got))  # without replacement
        assert not set(got) & own[(r.paradigm, r.pair_id)]
        for s in got:
            paradigm, acceptability = side[s]
            assert acceptability == r.acceptability
            if r.domain == "in":
                assert paradigm == r.paradigm
            elif r.domain == "out":
                assert paradigm not in (r.paradigm, "wiki")
            else:
                assert paradigm == "wiki"


def test_lengths_within_one_sentence_and_longer_prefixes_extend_shorter(built):
    _, df = built
    for _, g in df.groupby(["paradigm", "pair_id", "prefix_type", "draw"]):
        g = g.sort_values("target_length")
        previous: list[str] = []
        for r in g.itertuples():
            got = sentences(r.prefix)
            assert got[:len(previous)] == previous
            previous = got
            if r.target_length:
                assert r.actual_length >= r.target_length > words(priming.join(got[:-1]))


def test_seeded_and_independent_of_the_other_pairs(built):
    pool, df = built
    again = priming.build_prefixes(pool, words, unrelated=WIKI, lengths=LENGTHS, draws=2, seed=7)
    pd.testing.assert_frame_equal(df, again)
    other = priming.build_prefixes(pool, words, unrelated=WIKI, lengths=LENGTHS, draws=2, seed=8)
    long = df.target_length == 16
    assert (df[long].prefix.to_numpy() != other[long].prefix.to_numpy()).mean() > 0.5
    # draws differ from each other
    d0, d1 = (df[long & (df.draw == d)].prefix.to_numpy() for d in (0, 1))
    assert (d0 != d1).mean() > 0.5
    # shuffled rows, two targets only, the same pool: the same prefixes for those two
    shuffled = pool.sample(frac=1, random_state=3)
    targets = pool[pool.pair_id.isin([1, 4]) & (pool.paradigm == "p2")].iloc[::-1]
    sub = priming.build_prefixes(targets, words, pool=shuffled, unrelated=WIKI[::-1], lengths=LENGTHS[::-1],
                                 draws=2, seed=7)
    mine = df.merge(targets[["paradigm", "pair_id"]])
    pd.testing.assert_frame_equal(sub.sort_values(KEYS).reset_index(drop=True),
                                  mine.sort_values(KEYS).reset_index(drop=True))


@pytest.mark.parametrize("count, sign", [(joins, -1), (merges, 1)])
def test_a_counter_that_is_not_additive_still_gives_exact_lengths(count, sign):
    pool, lengths = tiny_pool(), (0, 4, 13, 15)
    df = priming.build_prefixes(pool, count, unrelated=WIKI, lengths=lengths, seed=1)
    assert (df.actual_length == df.prefix.map(count)).all()
    grown = df[df.target_length > 0]
    shorter = grown.prefix.map(lambda p: count(priming.join(sentences(p)[:-1])))
    assert (grown.actual_length >= grown.target_length).all() and (shorter < grown.target_length).all()
    # the sum of per-sentence counts (4 each) was corrected: fewer sentences where joins cost, more where they save
    plain = priming.build_prefixes(pool, words, unrelated=WIKI, lengths=lengths, seed=1)
    step = df.n_sentences - plain.n_sentences
    assert set(step) == {0, sign} and set(df[step != 0].target_length) == {13 if sign < 0 else 15}


@pytest.mark.parametrize("count, room, capped_lengths", [(words, 2, {16}), (joins, 1, {8, 16})])
def test_cap_at_the_model_positions(count, room, capped_lengths):
    pool = tiny_pool()
    n = 90 * len(capped_lengths)
    with pytest.warns(UserWarning, match=rf"^{n} of 288 prefixes stopped short .* at the model's 14 positions"):
        df = priming.build_prefixes(pool, count, unrelated=WIKI, lengths=(0, 4, 8, 16), max_positions=14, seed=2)
    by_id = pool.set_index(["paradigm", "pair_id"])
    for r in df.itertuples():
        pair = by_id.loc[(r.paradigm, r.pair_id)]
        for target in (pair.good, pair.bad):
            assert 1 + count((r.prefix + " " if r.prefix else "") + target) <= 14
    # targets take 4 tokens and the start token 1: 9 are left, two 4-token sentences (one when a join costs 1)
    assert set(df[df.capped].target_length) == capped_lengths
    assert set(df[df.capped].n_sentences) == {room}
    uncapped = priming.build_prefixes(pool, count, unrelated=WIKI, lengths=(0, 4, 8, 16), seed=2)
    for capped, free in zip(df.prefix, uncapped.prefix):  # stopped growing: the start of the free prefix
        assert sentences(free)[:len(sentences(capped))] == sentences(capped)


def test_texts_labelled_both_good_and_bad_are_left_out():
    pool = tiny_pool()
    pool.loc[(pool.paradigm == "p2") & (pool.pair_id == 5), "bad"] = "p1 good 1 w"  # bad here, good in p1 pair 1
    pool.loc[(pool.paradigm == "p3") & (pool.pair_id == 4), "bad"] = "p3 good 4 w."  # an identical pair
    df = priming.build_prefixes(pool, words, unrelated=WIKI, lengths=(16,), draws=3, short_pool="stop")
    used = set().union(*df.prefix.map(sentences))
    assert not {"p1 good 1 w.", "p3 good 4 w."} & used
    assert {"p1 good 2 w.", "p2 bad 4 w."} <= used


def test_exclude_same_item():
    pool = tiny_pool()
    df = priming.build_prefixes(pool, words, prefix_types=["in_acceptable"], lengths=(12,), exclude_same="item")
    for r in df.itertuples():
        partner = r.pair_id + 1 if r.pair_id % 2 == 0 else r.pair_id - 1
        used = {int(s.split()[2]) for s in sentences(r.prefix)}
        assert r.pair_id not in used and partner not in used


def test_clear_errors():
    pool = tiny_pool()
    with pytest.raises(ValueError, match="unknown prefix type.*'in_grammatical'.*choose from: in_acceptable"):
        priming.build_prefixes(pool, words, prefix_types=["in_grammatical"])
    with pytest.raises(ValueError, match=r"in_unacceptable pool of p1 pair 0 \(5 sentences\) runs out at 20 tokens, "
                                         r"short of the 24-token length; pass a larger pool="):
        priming.build_prefixes(pool, words, prefix_types=["in_unacceptable"], lengths=(4, 24))
    with pytest.raises(ValueError, match="lengths must be non-negative integers"):
        priming.build_prefixes(pool, words, lengths=(0, -5))
    with pytest.raises(ValueError, match="draws must be an integer >= 1, got 0"):
        priming.build_prefixes(pool, words, draws=0)
    with pytest.raises(ValueError, match="seed must be an integer >= 0, got -1"):
        priming.build_prefixes(pool, words, seed=-1)
    with pytest.raises(ValueError, match="short_pool must be 'error' or 'stop'"):
        priming.build_prefixes(pool, words, short_pool="skip")
    with pytest.raises(ValueError, match="lacks column"):
        priming.build_prefixes(pool.drop(columns="bad"), words)
    with pytest.raises(TypeError, match="count_tokens must return an int"):
        priming.build_prefixes(pool, lambda text: text.split(), prefix_types=["in_acceptable"], lengths=(4,))
    with pytest.warns(UserWarning, match=r"^18 of 36 prefixes stopped short .* when the pool ran out"):
        df = priming.build_prefixes(pool, words, prefix_types=["in_unacceptable"], lengths=(4, 24),
                                    short_pool="stop")
    short = df[df.target_length == 24]
    assert short.exhausted.all() and (short.n_sentences == 5).all() and (short.actual_length == 20).all()


def test_single_phenomenon_prefixes():
    pool = tiny_pool(per=12)
    targets = pool[pool.pair_id < 3]
    df = priming.single_phenomenon_prefixes(targets, words, pool=pool, n_sentences=10, seed=3)
    assert list(df.columns) == priming.SINGLE_COLUMNS
    assert len(df) == len(targets) * 2 and set(df.source_phenomenon) == {"ph_a", "ph_b"}
    source = {priming.as_sentence(r.good): r.phenomenon for r in pool.itertuples()}
    for r in df.itertuples():
        got = sentences(r.prefix)
        assert len(got) == len(set(got)) == r.n_sentences == 10 and r.actual_length == 40 and not r.capped
        assert {source[s] for s in got} == {r.source_phenomenon}  # only good sentences of that phenomenon
        assert not {s for s in got if s.startswith(f"{r.paradigm} good {r.pair_id} ")}
    again = priming.single_phenomenon_prefixes(targets.iloc[::-1], words, pool=pool, n_sentences=10, seed=3)
    keys = ["paradigm", "pair_id", "source_phenomenon"]
    pd.testing.assert_frame_equal(df.sort_values(keys).reset_index(drop=True),
                                  again.sort_values(keys).reset_index(drop=True))
    bad = priming.single_phenomenon_prefixes(targets, words, pool=pool, sources="ph_b", acceptability="unacceptable")
    assert bad.prefix.str.contains(" good ").sum() == 0 and bad.prefix.str.startswith("p3 bad").all()
    with pytest.warns(UserWarning, match="hold fewer than 10 sentences"):
        capped = priming.single_phenomenon_prefixes(targets, words, pool=pool, sources="ph_a", max_positions=20)
    assert (capped.n_sentences == 3).all() and capped.capped.all()  # 1 + 3 x 4 + 4 + ... <= 20
    with pytest.raises(ValueError, match="source phenomenon ph_a has 23 acceptable sentences besides p1 pair 0, "
                                         "fewer than n_sentences=24"):  # its own good sentence left out
        priming.single_phenomenon_prefixes(targets, words, pool=pool, sources="ph_a", n_sentences=24)
    with pytest.raises(ValueError, match="unknown source phenomena \\['ph_z'\\]"):
        priming.single_phenomenon_prefixes(targets, words, pool=pool, sources=["ph_z"])


@pytest.fixture(scope="module")
def blimp_sample(tiny):
    loaded = tiny("tiny-gpt2")
    blimp = data.load("blimp")
    wiki = data.load("wikitext")
    chosen = ["adjunct_island", "anaphor_number_agreement", "regular_plural_subject_verb_agreement_1"]
    targets = first_per_paradigm(blimp[blimp.paradigm.isin(chosen)], 2)
    scorer = CausalScorer(loaded)
    counter = priming.token_counter(loaded.tokenizer)
    with pytest.warns(UserWarning, match="model's 1024 positions"):
        df = priming.build_prefixes(targets, counter, pool=blimp, unrelated=wiki, max_positions=scorer.max_positions,
                                    seed=11)
    return loaded, blimp, wiki, targets, scorer, counter, df


def test_token_counter_equals_the_tokenizer(blimp_sample):
    loaded, blimp, *_ = blimp_sample
    counter = priming.token_counter(loaded.tokenizer)
    texts = list(blimp.good[:50]) + [" " + s for s in blimp.bad[:50]] + [""]
    expected = [len(loaded.tokenizer(t, add_special_tokens=False)["input_ids"]) for t in texts]
    assert [counter(t) for t in texts] == expected == counter.many(texts)


def decompose(prefix: str, allowed: set[str]) -> list[str] | None:
    """``prefix`` as a join of sentences of ``allowed`` (the longest-first split), or None."""
    cuts = [i for i, c in enumerate(prefix) if c == " "] + [len(prefix)]
    best: dict[int, list[str]] = {-1: []}
    for end in cuts:
        for begin in sorted(best, reverse=True):
            if prefix[begin + 1:end] in allowed:
                best[end] = best[begin] + [prefix[begin + 1:end]]
                break
    return best.get(len(prefix)) if prefix else []


def test_blimp_prefixes_with_a_real_tokenizer(blimp_sample):
    loaded, blimp, wiki, targets, scorer, counter, df = blimp_sample
    assert scorer.max_positions == 1024
    assert len(df) == 6 * (5 * (len(priming.DEFAULT_LENGTHS) - 1) + 1)
    hf = [len(loaded.tokenizer(p, add_special_tokens=False)["input_ids"]) for p in df.prefix]
    assert df.actual_length.tolist() == hf
    where: dict[tuple[str, str], set[str]] = {}  # (text, acceptability) -> paradigms
    for side, acceptability in (("good", "acceptable"), ("bad", "unacceptable")):
        for text, paradigm in zip(blimp[side].map(priming.as_sentence), blimp.paradigm):
            where.setdefault((text, acceptability), set()).add(paradigm)
    pools = {"acceptable": {t for t, a in where if a == "acceptable"},
             "unacceptable": {t for t, a in where if a == "unacceptable"},
             "wikitext": set(wiki.sentence.map(priming.as_sentence))}
    pairs = targets.set_index(["paradigm", "pair_id"])
    for r in df.itertuples():
        pair = pairs.loc[(r.paradigm, r.pair_id)]
        if r.prefix_type == priming.NO_PREFIX:
            assert r.prefix == "" and r.target_length == 0
            continue
        got = decompose(r.prefix, pools["wikitext" if r.prefix_type == "wikitext" else r.acceptability])
        assert got is not None and len(got) == r.n_sentences == len(set(got))
        for target in (pair.good, pair.bad):  # never its own sentences; what the engine runs fits the model
            assert priming.as_sentence(target) not in got
            context = r.prefix + " " if r.prefix else ""
            assert len(scorer.encode(Request(context, target)).ids) <= 1024
        if r.domain in ("in", "out"):
            paradigms = set().union(*(where[(s, r.acceptability)] for s in got))
            assert paradigms == {r.paradigm} if r.domain == "in" else r.paradigm not in paradigms
        if r.target_length and not r.capped:
            assert r.actual_length >= r.target_length > counter(" ".join(got[:-1]))
    long = df[df.target_length == 1000]
    assert long.capped.any() and (df[df.capped].target_length == 1000).all()
    assert (df[df.capped].actual_length < 1000).all()  # capped: the length was not reached


def test_capped_blimp_prefixes_stop_where_the_next_sentence_would_not_fit(blimp_sample):
    loaded, blimp, wiki, targets, scorer, counter, df = blimp_sample
    free = priming.build_prefixes(targets, counter, pool=blimp, unrelated=wiki, lengths=(1000,), seed=11)
    free = free.set_index(["paradigm", "pair_id", "prefix_type"])
    allowed = set(blimp.good.map(priming.as_sentence)) | set(blimp.bad.map(priming.as_sentence)) | \
        set(wiki.sentence.map(priming.as_sentence))
    pairs = targets.set_index(["paradigm", "pair_id"])
    capped = df[df.capped]
    assert len(capped) >= 3
    for r in capped.itertuples():
        whole = free.loc[(r.paradigm, r.pair_id, r.prefix_type)]
        assert not whole.capped and whole.n_sentences > r.n_sentences
        got = decompose(whole.prefix, allowed)
        assert priming.join(got[:r.n_sentences]) == r.prefix
        longer = priming.join(got[:r.n_sentences + 1])
        pair = pairs.loc[(r.paradigm, r.pair_id)]
        assert len(scorer.encode(Request(r.prefix + " ", pair.good)).ids) <= 1024  # the engine takes it ...
        # ... but not one sentence more (the engine refuses it: counted as it counts, start token + text)
        counts = [len(loaded.tokenizer(longer + " " + t, add_special_tokens=False)["input_ids"])
                  for t in (pair.good, pair.bad)]
        assert 1 + max(counts) > 1024
        with pytest.raises(ValueError, match="exceeds the model's 1024 positions"):
            for t in (pair.good, pair.bad):
                scorer.encode(Request(longer + " ", t))


def test_06_primes_ten_seeded_blimp_paradigms_by_default():
    """"auto" keeps 10 BLiMP paradigms drawn with the seed (numpy's draw over the sorted names,
    recomputed here) and every SyntaxGym suite; the kept names go into the score files'
    configuration, so two subsets of the same size are never confused."""
    from helpers.data.selection import select

    whole = select("blimp", 2)
    names = sorted(whole.frame.paradigm.unique())
    picked = whole.pick_paradigms(priming.paradigm_choice("blimp", "auto"), seed=0)
    expected = sorted(np.random.default_rng(0).choice(names, 10, replace=False).tolist())
    assert list(picked.paradigms) == expected and sorted(picked.frame.paradigm.unique()) == expected
    assert len(picked) == 20 and picked.config()["paradigms"] == expected and "paradigms" not in whole.config()
    assert whole.pick_paradigms(10, seed=1).paradigms != picked.paradigms
    assert priming.paradigm_choice("syntaxgym", "auto") is None and whole.pick_paradigms(None) is whole
    named = whole.pick_paradigms("anaphor_gender_agreement, drop_argument".replace(" ", "").split(","))
    assert named.paradigms == ("anaphor_gender_agreement", "drop_argument")
    assert priming.paradigm_choice("blimp", "a,b") == ["a", "b"]
    with pytest.raises(ValueError, match="not paradigms of blimp; choose from: adjunct_island"):
        whole.pick_paradigms(["anaphor_gender_agreement", "no_such"])
    with pytest.raises(ValueError, match="blimp has 67 paradigms here"):
        whole.pick_paradigms(68)


def test_the_teaching_defaults_are_said_out_loud_and_a_chosen_subset_is_not():
    note = priming.teaching_subset("blimp", "auto", 20, 200, 67000)
    assert note == ("06 primes 200 of the 67,000 pairs of blimp: its teaching defaults (paradigms='auto': 10 paradigms "
                    "drawn with draw_seed; limit=20 pairs each) keep a run to minutes on a CPU; pass paradigms=None and "
                    "limit=None to prime every pair, as Sinha et al. did")
    assert "every suite; limit=20" in priming.teaching_subset("syntaxgym", "auto", 20, 400, 1018)
    assert priming.teaching_subset("blimp", None, 20, 1340, 67000) is None  # chosen: no note
    assert priming.teaching_subset("syntaxgym", "auto", None, 1018, 1018) is None  # every pair
