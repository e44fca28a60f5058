"""The manifest of the Hub datasets: repository, pinned revision, licence, citation, split,
columns and configs of MultiBLiMP, BLiMP-NL, TurBLiMP, BHS, QFrBLiMP and XCOMPS (facts from their
Hub pages, their GitHub releases and the task configurations of lm-evaluation-harness and BabyLM
2026; see :mod:`hub` for how they are downloaded and locked)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .multiblimp_languages import LANGUAGES
from .sources import DataSource


@dataclass(frozen=True)
class HubDataset:
    name: str
    repo_id: str
    revision: str | None  # the pinned commit; None: the first download records the main branch's
    license: str
    citation: str
    split: str
    good: str  # the column of the acceptable sentence
    bad: str
    configs: tuple[str, ...]  # every config of the release
    config_kind: str = "configs"  # what a config is, in messages ("languages" for MultiBLiMP)
    card_config: str | None = None  # set: each of ``configs`` is a split of this one config of the card (XCOMPS)

    @property
    def folder_name(self) -> str:
        return self.repo_id.replace("/", "__")

    def folders(self, source: DataSource) -> list[Path]:
        """Where a local copy is looked for: the mirror's hub/ folder, then data/raw/hub/."""
        bases = [source.mirror] if source.mirror is not None else []
        return [base / "hub" / self.folder_name for base in [*bases, source.raw_dir]]

    def download_folder(self, source: DataSource) -> Path:
        return source.raw_dir / "hub" / self.folder_name


# BLiMP-NL: phenomenon -> its paradigms; a config is "<phenomenon>__<paradigm>" (22 phenomena, 84 paradigms)
BLIMP_NL_PARADIGMS = {
    "adpositional_phrases": "argument_r_extraction argument_scrambling",
    "adverbial_modification": "position_proform position_type",
    "anaphor_agreement": "number person",
    "argument_structure": "argument_number_ditransitive argument_number_in_transitive ditransitive_nomdat_1 "
                          "ditransitive_nomdat_2 ditransitive_nomdat_3 intransitive_unaccusative_1 "
                          "intransitive_unaccusative_2 intransitive_unaccusative_3",
    "auxiliaries": "order_1 order_2 perfect semi_aspectual_1 semi_aspectual_2",
    "binding_principle_a": "c_command monomorphemic",
    "complementive": "ditransitive intransitive position_adverb position_verb transitive",
    "crossing_dependencies": "cross_dependency",
    "determiners": "geen_expletive geen_scrambling_1 geen_scrambling_2 negative_polarity",
    "extraposition": "adjectival_adverbial adjectival_supplementive argument_nominal",
    "finite_argument_clause": "complementizer perception_dat perception_of position sluicing_1 sluicing_2",
    "infinitival_argument_clause": "bare_verb_cluster bare_verb_type_1 bare_verb_type_2 bare_verb_type_3 "
                                   "om_te te_om_te_difference_1 te_om_te_difference_2 te_transparant_split "
                                   "verb_type",
    "nominalization": "type_inf_1 type_inf_2",
    "parasitic_gaps": "scrambling structure_type_1 structure_type_2 structure_type_3",
    "passive": "aci ditransitive_1 ditransitive_2 impersonal",
    "quantifiers": "universal_difference_agreement_plural universal_difference_agreement_singular",
    "r_words": "adverbial weak_proform",
    "relativization": "island pied_piping resumptive_prolepsis",
    "topicalization": "island question_similarity_1 question_similarity_2 resumptive_prolepsis",
    "verb_second": "order_embedded order_main",
    "wh_movement": "filler_effect_gap filler_effect_no_gap hierarchy question_formation stranding_1 stranding_2",
    "wh_movement_restrictions": "bridge_verb_1 bridge_verb_2 island_1 island_2 resumptive_prolepsis superiority",
}
TURBLIMP_PHENOMENA = (
    "anaphor_agreement", "argument_structure_transitive", "argument_structure_ditransitive", "binding",
    "determiners", "ellipsis", "irregular_forms", "island_effects", "nominalization", "npi_licensing", "passives",
    "quantifiers", "relative_clauses", "scrambling", "subject_agreement", "suspended_affixation")

# BHS: one config per test (lm-evaluation-harness 0.4.13's tasks/bhs/*.yaml, their dataset_name):
# Basque auxiliary agreement with the subject (S), direct (DO) or indirect object (IO) in each
# structure, Hindi aspect with and without the ergative "ne", Swahili noun-class agreement
BHS_CONFIGS = (
    "basque-DO-S_DO_V_AUX", "basque-DO-S_IO_DO_V_AUX", "basque-IO-IO_S_V_AUX", "basque-IO-S_IO_DO_V_AUX",
    "basque-S-IO_S_V_AUX", "basque-S-S_DO_V_AUX", "basque-S-S_IO_DO_V_AUX", "basque-S-S_V_AUX",
    "hindi-S_O_V", "hindi-S_PossPRN_O_V", "hindi-S_PossPRN_PossN_O_V", "hindi-S_ne_O_V", "hindi-S_ne_PossPRN_O_V",
    "hindi-S_ne_PossPRN_PossN_O_V",
    "swahili-N_of_Poss_D_AP_V_ni_AN", "swahili-N_of_Poss_D_AP_ni_AN", "swahili-N_of_Poss_D_A_V",
    "swahili-N_of_Poss_D_A_V1_V2", "swahili-N_of_Poss_D_V", "swahili-N_of_Poss_D_ni_A", "swahili-N_of_Poss_V",
    "swahili-N_of_Poss_ni_A")

# XCOMPS: one split of the card's "default" config per language, comps_<ISO 639-1> (BabyLM 2026's
# multilingual/tasks/xcomps/*.yaml, their test_split; the GitHub release's data/comps_<iso>.json)
XCOMPS_LANGUAGES = ("ar", "ca", "de", "el", "es", "fa", "fr", "he", "hu", "ja", "ko", "nl", "ru", "tr", "uk", "vi",
                    "zh")

HUB: dict[str, HubDataset] = {d.name: d for d in [
    HubDataset("multiblimp", "jumelet/multiblimp", "de923efa8d2483d6b13364ee68e65308e990a991", "CC-BY-4.0",
               "Jumelet, Weissweiler, Nivre & Bisazza (TACL 2026), MultiBLiMP 1.0: A Massively Multilingual "
               "Benchmark of Linguistic Minimal Pairs, arXiv 2504.02768",
               "train", "sen", "wrong_sen", tuple(sorted(LANGUAGES)), "languages"),
    HubDataset("blimp_nl", "jmichaelov/blimp_nl", None, "CC BY-NC-ND 4.0 (the article's, as the paper states)",
               "Suijkerbuijk et al. (2025), BLiMP-NL, Computational Linguistics 51(4)",
               "test", "sentence_good", "sentence_bad",
               tuple(f"{p}__{s}" for p, names in BLIMP_NL_PARADIGMS.items() for s in names.split())),
    HubDataset("turblimp", "juletxara/turblimp", None, "CC-BY-4.0",
               "Başar, Padovani, Jumelet & Bisazza (2025), TurBLiMP: A Turkish Benchmark of Linguistic Minimal "
               "Pairs, arXiv 2506.13487", "train", "sentence_good", "sentence_bad", TURBLIMP_PHENOMENA),
    HubDataset("bhs", "jmichaelov/bhs", None, "as its Hub card states (not recorded in lm-evaluation-harness's task)",
               "Kryvosheieva & Levy (2025), Controlled Evaluation of Syntactic Knowledge in Multilingual Language "
               "Models, LoResLM 2025, pages 402-413", "test", "ending_good", "ending_bad", BHS_CONFIGS),
    HubDataset("qfrblimp", "graalul/qfrblimp", None, "CC BY-NC-SA 4.0 (its Hub card)",
               "Beauchemin, Veilleux, Khoury & Roy (2026), QFrBLiMP: a Quebec-French Benchmark of Linguistic "
               "Minimal Pairs, Findings of EACL 2026, pages 4274-4304, arXiv 2509.25664",
               "test", "sentence_good", "sentence_bad", ("qfrblimp",)),
    HubDataset("xcomps", "fpadovani/xcomps-dataset", None,
               "MIT (the GitHub release's LICENSE, LinyangHe/XCOMPS; no card of the Hub copy was readable)",
               "He et al. (2025), XCOMPS: A Multilingual Benchmark of Conceptual Minimal Pairs, SIGTYP 2025, "
               "pages 75-81, arXiv 2502.19737", "comps_<language>", "acceptable_sent", "unacceptable_sent",
               tuple(f"comps_{code}" for code in XCOMPS_LANGUAGES), "languages", card_config="default"),
]}


def spec_of(name: str) -> HubDataset:
    if name not in HUB:
        raise KeyError(f"{name!r} is not a Hub dataset; these are: {', '.join(HUB)}")
    return HUB[name]
