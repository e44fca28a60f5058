"""Dataset readers on the mirror: exact counts, schema, quirks and bad data."""
from __future__ import annotations

import hashlib
import shutil

import pandas as pd
import pytest
import requests
import yaml

from helpers import data, paths
from helpers.data import blimp, chinese, climp, corpora, english, hu_levy, jblimp, papers, sources, syntaxgym
from helpers.data.schema import PAIR_COLUMNS, DataFormatError
from helpers.data.sources import ChecksumError, DataNotFoundError, DataSource, UnlistedFileError
from helpers.methods import templates
from helpers.reporting import paper_check, published


@pytest.fixture(scope="module")
def blimp_df():
    return blimp.load()


def test_blimp_counts(blimp_df):
    assert len(blimp_df) == 67_000
    assert blimp_df.paradigm.nunique() == 67
    assert blimp_df.phenomenon.nunique() == 12
    assert int(blimp_df.identical.sum()) == 7
    assert len(blimp.load(drop_identical=True)) == 66_993
    per_phenomenon = blimp_df.groupby("phenomenon").paradigm.nunique()
    assert per_phenomenon["argument_structure"] == 9 and per_phenomenon["determiner_noun_agreement"] == 8


def test_blimp_identical_pairs_are_the_known_seven(blimp_df):
    got = sorted(map(tuple, blimp_df[blimp_df.identical][["paradigm", "pair_id"]].values.tolist()))
    assert got == [("passive_1", 324), ("passive_1", 810), ("principle_A_case_2", 105), ("principle_A_case_2", 287),
                   ("principle_A_case_2", 372), ("principle_A_case_2", 816), ("principle_A_case_2", 967)]
    others = blimp_df[~blimp_df.identical]
    assert (others.good != others.bad).all()


def test_word_shuffle_flag_against_lexically_identical(blimp_df):
    report = blimp.word_shuffle_report(blimp_df)
    shuffle = set(report[report.word_shuffle_paradigm].paradigm)
    lexical = set(report[report.lexically_identical == 1].paradigm)
    assert len(shuffle) == 13 and len(lexical) == 20
    assert shuffle - lexical == {"ellipsis_n_bar_1", "existential_there_quantifiers_2"}
    assert lexical - shuffle == {"anaphor_number_agreement"} | {p for p in lexical if p.startswith("determiner_noun")}
    assert len(lexical - shuffle) == 9
    assert blimp.same_bag_of_words("Who should Derek hug after shocking Richard?",
                                   "Who should Derek hug Richard after shocking?")
    assert not blimp.same_bag_of_words("The dog barks.", "The dogs barks.")


def test_blimp_attractors_and_human_agreement(blimp_df):
    counts = blimp_df.attractor.value_counts().to_dict()
    assert counts == {"none": 4000, "relational noun": 1000, "relative clause": 1000}
    adj = blimp_df[blimp_df.paradigm == "adjunct_island"].human_agreement.unique()
    assert list(adj) == [0.94]
    assert blimp_df.human_agreement.notna().all()


def test_climp_counts_and_ba_construction():
    df = climp.load(add_period=False)
    assert (len(df), df.paradigm.nunique(), df.phenomenon.nunique()) == (16_000, 16, 9)
    ba = df[df.paradigm == "ba_construction"]
    assert len(ba) == 1000
    assert (ba.good.str.replace("把", "被") == ba.bad).all()  # every pair a 把 -> 被 swap, good first
    assert not (ba.good.str.contains("被")).any()
    period = climp.load()
    assert period.good.str.endswith("。").all() and (period.good.str[:-1] == df.good).all()


def test_syntaxgym_pairs_and_suites():
    pairs = syntaxgym.load_pairs()
    assert len(pairs) == 1018
    suites = syntaxgym.load_suites()
    assert len(suites) == 34 and sum(len(s.items) for s in suites.values()) == 842
    ce = suites["center_embed"]
    assert ce.predictions == ["[ (6;%plaus%) + (7;%plaus%) ] < [ (6;%implaus%) + (7;%implaus%) ]"]
    assert ce.sentence(1, "plaus") == "The painting that the artist painted deteriorated"
    table = syntaxgym.suites_table(suites)
    assert set(table.columns) >= {"suite", "item", "condition", "region", "region_name", "content"}
    assert table.suite.nunique() == 34


def test_chinese_and_english_counts():
    z = chinese.load_zhoblimp()
    assert (len(z), z.paradigm.nunique()) == (35_400, 118)
    s = chinese.load_sling()
    assert (len(s), s.paradigm.nunique()) == (40_000, 40)
    assert len(chinese.load_sling(include_small=True)) == 40_000 + 14 * 40
    for variant in ("plausible", "implausible"):
        sc = english.load_scamp(variant)
        assert (len(sc), sc.paradigm.nunique()) == (67_000, 67)
    assert len(english.load_cola()) == 8551
    li = english.load_li()
    assert len(li) == 2379
    assert {"rating_good", "rating_bad", "rating_diff"} <= set(li.columns)
    assert (li.rating_diff - (li.rating_good - li.rating_bad)).abs().max() < 1e-6


def test_hu_levy_stimuli():
    assert len(hu_levy.load_word_prediction("p18")) == 384
    assert len(hu_levy.load_word_prediction("news")) == 222
    assert len(hu_levy.load_word_comparison()) == 395
    assert len(hu_levy.load_sentence_pairs("blimp")) == 390
    assert len(hu_levy.load_sentence_pairs("syntaxgym")) == 345
    zh = hu_levy.load_sentence_pairs("mandarin")
    assert len(zh) == 535 and not zh.good.str.contains(" ").any()


def test_wikitext_sentences():
    w = english.wikitext_sentences()
    assert len(w) > 8000
    assert not w.sentence.str.contains("@-@").any()
    assert w.sentence.iloc[0].startswith("Robert Boulter is an English film, television and theatre actor.")


@pytest.mark.parametrize("name", [n for n, d in data.DATASETS.items() if d.kind == "pairs" and n not in data.HUB])
def test_every_pair_reader_returns_the_canonical_schema(name):
    """The mirror's pair datasets (the Hub's are checked on fixtures: tests/test_data_hub.py)."""
    df = data.load(name)
    assert list(df.columns[:8]) == PAIR_COLUMNS
    for col in ("dataset", "language", "paradigm", "phenomenon", "field", "good", "bad"):
        assert df[col].dtype == "string", (name, col)
    assert df.pair_id.dtype == "int64" and df.identical.dtype == bool
    assert (df.good != df.bad)[~df.identical].all()
    expected = data.DATASETS[name].language
    if expected == "mul":  # a multilingual dataset names each row's language, as MultiBLiMP's reader does
        assert df.language.str.fullmatch(r"[a-z]{2,3}").all(), name
    else:
        assert (df.language == expected).all()


def test_cola_has_the_sentence_schema():
    df = english.load_cola()
    assert list(df.columns[:8]) == data.SENTENCE_COLUMNS
    assert set(df.label.unique()) == {0, 1}


def _temp_mirror(tmp_path, replace: str):
    """A mirror whose ``replace`` folder is a copy (others are links to the real mirror)."""
    real = paths.mirror()
    tmp_path.mkdir(parents=True, exist_ok=True)
    for entry in real.iterdir():
        if entry.name != replace.split("/")[0]:
            (tmp_path / entry.name).symlink_to(entry)
    shutil.copytree(real / replace, tmp_path / replace)
    return tmp_path


def _edit_li(root):
    path = root / "li" / "LI_Large_pairs.csv"
    path.write_text(path.read_text().replace("Kerry attempted", "Kerry tried"))
    return path


def test_malformed_row_names_file_and_line(tmp_path, monkeypatch):
    root = _temp_mirror(tmp_path, "blimp")
    extra = root / "blimp" / "data" / "zz_extra.jsonl"
    good = (root / "blimp" / "data" / "adjunct_island.jsonl").read_text().splitlines()[0]
    extra.write_text(good + "\n" + '{"sentence_good": "A cat.", oops\n')
    # the default source reads MINIMAL_PAIRS_DATA when the reader runs, not at import
    monkeypatch.setenv(paths.MIRROR_ENV, str(root))
    assert DataSource.default().mirror == root.resolve()
    with pytest.raises(UnlistedFileError, match=r"zz_extra.jsonl: blimp/data/zz_extra.jsonl is not listed in "
                                                r"sources.yaml"):
        blimp.load()  # a file the manifest does not list is never read
    listed = tmp_path / "manifest.yaml"  # a manifest that lists it: the reader reads it, and names the bad line
    files = sources.manifest()["files"] | {"blimp/data/zz_extra.jsonl": {"sha256": sources.sha256(extra)}}
    listed.write_text(yaml.safe_dump({"origins": {}, "files": files}))
    with pytest.raises(DataFormatError, match=r"zz_extra.jsonl, line 2: not valid JSON"):
        blimp.load(source=DataSource(root, manifest_file=listed))


def test_malformed_climp_row(tmp_path):
    root = _temp_mirror(tmp_path, "climp")
    path = root / "climp" / "CLiMP_corpus" / "zz_extra_1000.csv"
    path.write_text(",0,1,2,3\n0,x,x,一个句子,1\n1,x,x,两个句子\n")
    with pytest.raises(UnlistedFileError, match=r"climp/CLiMP_corpus/zz_extra_1000.csv is not listed"):
        climp.load(source=DataSource(root))
    with pytest.raises(DataFormatError, match=r"zz_extra_1000.csv, line 3: expected 5 columns"):
        climp.load(source=DataSource(root, manifest_file=None))  # your own files: read unchecked


def test_checksum_mismatch_names_the_file_and_the_fix(tmp_path):
    path = _edit_li(_temp_mirror(tmp_path, "li"))
    with pytest.raises(ChecksumError) as err:
        english.load_li(source=DataSource(tmp_path))
    msg = str(err.value)
    assert msg.startswith(f"{path}: sha256 ")
    assert "differs from sources.yaml" in msg and "not the recorded version of li/LI_Large_pairs.csv" in msg
    assert ("To fix: restore it from https://raw.githubusercontent.com/SiyuanSong2004/language-introspection/"
            "e8d4c5f/LI_Large_pairs.csv") in msg


def test_two_sources_do_not_affect_each_other(tmp_path):
    """No hidden state: a verified file of one mirror says nothing about another mirror's copy."""
    good = DataSource(_temp_mirror(tmp_path / "good", "li"), raw_dir=tmp_path / "raw")
    bad = DataSource(_temp_mirror(tmp_path / "bad", "li"), raw_dir=tmp_path / "raw")
    _edit_li(bad.mirror)
    assert len(english.load_li(source=good)) == 2379
    with pytest.raises(ChecksumError, match="bad/li/LI_Large_pairs.csv"):
        english.load_li(source=bad)
    assert good.path(english.LI) == tmp_path / "good" / english.LI  # the good mirror is still read, and passes
    assert len(data.load("li", source=good)) == 2379
    # the checksum cache is keyed on the file's size and mtime: a file changed after a check fails
    _edit_li(good.mirror)
    with pytest.raises(ChecksumError, match="good/li/LI_Large_pairs.csv"):
        good.path(english.LI)


def test_source_mode_is_checked():
    with pytest.raises(ValueError, match="mode must be 'mirror' or 'download', got 'web'"):
        DataSource(None, mode="web")


def test_missing_mirror_without_network_says_how(tmp_path, monkeypatch):
    monkeypatch.setattr(requests, "get", _no_network)
    source = DataSource(tmp_path / "nowhere", raw_dir=tmp_path / "raw", mode="download")
    with pytest.raises(DataNotFoundError) as err:
        english.load_li(source=source)
    msg = str(err.value)
    url = "https://raw.githubusercontent.com/SiyuanSong2004/language-introspection/e8d4c5f/LI_Large_pairs.csv"
    assert msg.startswith("li/LI_Large_pairs.csv was not found")
    assert f"Downloading {url} failed (ConnectionError: no network?). To fix: download it from {url} into " in msg
    assert not list((tmp_path / "raw").rglob("*.csv"))  # no partial file left behind
    with pytest.raises(DataNotFoundError, match="no data mirror: looked for .*nowhere"):
        source.root()


class _Response:
    """What pooch reads from requests.get: status, headers and the body in chunks."""

    def __init__(self, body: bytes):
        self.body, self.headers = body, {"content-length": str(len(body))}

    def raise_for_status(self):
        pass

    def iter_content(self, chunk_size):
        return (self.body[i:i + chunk_size] for i in range(0, len(self.body), chunk_size))


def test_download_mode_fetches_checksummed_files_into_raw(tmp_path, monkeypatch):
    real = paths.mirror()
    asked = []

    def serve(url, **kwargs):  # the origin, served from the real mirror
        asked.append(url)
        prefix = "https://raw.githubusercontent.com/Yusuke196/llm-acceptability/0d3e480/"
        return _Response((real / "ide2024-templates" / url.removeprefix(prefix)).read_bytes())

    monkeypatch.setattr(requests, "get", serve)
    source = DataSource(None, raw_dir=tmp_path / "raw", mode="download")
    rel = "ide2024-templates/templates_ll/template_blimp_single_1.txt"
    got = source.path(rel)
    assert got == tmp_path / "raw" / rel and got.read_bytes() == (real / rel).read_bytes()
    assert asked == ["https://raw.githubusercontent.com/Yusuke196/llm-acceptability/0d3e480/"
                     "templates_ll/template_blimp_single_1.txt"]
    # a folder downloads every file the manifest lists under it; the next read is local
    folder = source.files("ide2024-templates/prompts/blimp", "*.json")
    assert len(folder) == 20 and len(asked) == 21
    assert source.path(rel) == got and len(asked) == 21
    # a folder with a file missing (an interrupted download) is completed, never read partly
    folder[3].unlink()
    assert source.files("ide2024-templates/prompts/blimp", "*.json") == folder and len(asked) == 22
    # a download whose sha256 differs from the manifest never lands in raw_dir
    monkeypatch.setattr(requests, "get", lambda url, **kw: _Response(b"changed upstream"))
    with pytest.raises(ChecksumError, match="template_climp_single_1.txt"):
        source.path("ide2024-templates/templates_ll/template_climp_single_1.txt")
    assert not (tmp_path / "raw" / "ide2024-templates/templates_ll/template_climp_single_1.txt").exists()


def _no_network(*args, **kwargs):
    raise requests.exceptions.ConnectionError("no network")


def test_manifest_covers_every_file_read():
    """data/sources.yaml is what ORIGINS' patterns find in the mirror and the papers folder now (no
    file left out, none stale), and every file a reader names is in it. The files really opened by
    make data and the notebooks are recorded in tests/test_data_files_read.py."""
    manifest = sources.manifest()
    assert manifest == sources.build(paths.mirror()) | {"papers": papers.build(paths.papers())}
    files = manifest["files"]
    named = [blimp.HUMAN_SUMMARY, english.LI, english.WIKITEXT, syntaxgym.PAIR_CORPUS, hu_levy.DTFIT,
             *hu_levy.WORD_PREDICTION.values(), *hu_levy.PAIRS.values(), *jblimp.FILES.values(),
             *(english.COLA.format(split=s) for s in ("in_domain_train", "in_domain_dev", "out_of_domain_dev")),
             templates.HU_LEVY_PROMPTS, paper_check.BLIMP_RESULTS,
             *(paper_check.SG_RESULTS.format(t) for t in ("gpt-2-pretrained_", "gpt-2-xl-pretrained_")),
             *(c.path for c in corpora.CORPORA.values() if not c.pattern)]
    assert [f for f in named if f not in files] == []
    results_zh = [f for f in files if f.startswith(paper_check.HL_ZH + "/")]
    assert len(results_zh) == 18 and f"{paper_check.HL_ZH}/exp1_word-prediction/news_zh_text-davinci-003_direct.json" \
        in results_zh
    assert sorted(manifest["papers"]["files"]) == sorted(published.FILES)
    for relative in ("li/LI_Large_pairs.csv", "hu-levy-2023/datasets/exp1/news_zh/corpus.csv"):
        with open(paths.mirror() / relative, "rb") as f:  # an independent sha256
            assert files[relative]["sha256"] == hashlib.sha256(f.read()).hexdigest()
    with open(paths.papers() / "ide2024_table3.csv", "rb") as f:
        assert manifest["papers"]["files"]["ide2024_table3.csv"]["sha256"] == hashlib.sha256(f.read()).hexdigest()


def test_processed_round_trip(tmp_path, monkeypatch):
    monkeypatch.setenv(paths.PROCESSED_ENV, str(tmp_path))  # read when the path is needed
    assert data.processed_path("climp") == tmp_path / "climp.parquet"
    df = data.load_processed("climp")
    again = pd.read_parquet(tmp_path / "climp.parquet")
    pd.testing.assert_frame_equal(df.reset_index(drop=True), again)
    with pytest.raises(KeyError, match="unknown dataset 'blimpp'"):
        data.load("blimpp")


def test_dataset_names_and_redirected_folders(tmp_path, monkeypatch):
    assert data.dataset_names("li, climp") == ["li", "climp"] and len(data.dataset_names("all")) == len(data.DATASETS)
    with pytest.raises(ValueError, match="unknown dataset 'blimpp'"):
        data.dataset_names(["blimp", "blimpp"])
    monkeypatch.delenv(paths.OUTPUTS_ENV, raising=False)
    assert paths.scores() == paths.ROOT / "outputs" / "scores"
    monkeypatch.setenv(paths.OUTPUTS_ENV, str(tmp_path / "out"))
    assert (paths.outputs(), paths.scores()) == (tmp_path / "out", tmp_path / "out" / "scores")
