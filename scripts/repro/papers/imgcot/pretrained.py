"""Stage (config/full.yaml): ImgCoT with a frozen pretrained LM, SmolLM2-135M-Instruct, on GSM-style problems.

The problems are reasoning-gym's GSM-symbolic templates with worked answers (``language`` source). Each worked
answer is rendered with the dynamic font rule, the image tokenizer (the same VQ-VAE as the default path) is
trained on the renders, and a linear projector maps the quantised latent vectors into the LM's input
embedding space; the LM stays frozen and only the projector is trained, with the loss on the answer tokens
after ``question -> latent tokens -> "The answer is"`` (teacher-forced with each training problem's own codes).

At test time the latents are generated from the question alone, as the smoke path's LM writes its own latent
tokens: a linear latent head on the frozen LM's last hidden state of the question prompt predicts each of the
``n_latent`` codes (trained with cross-entropy on the training problems' codes); the predicted codes' codebook
vectors go through the projector. The test problem's rendered worked answer is never encoded (that would feed
the model the answer). Accuracy is compared with the frozen LM answering directly (no CoT) on held-out problems.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from repro.data.language.corpora import gsm_problems
from repro.data.language.model import LanguageModel, smollm2
from repro.learning.training import seed_everything
from repro.papers.imgcot.models import ImageVQ, image_loss
from repro.papers.imgcot.render import render
from repro.workflow.io import write_json

ANSWER_CUE = " The answer is"


def render_all(problems, cfg: dict) -> np.ndarray:
    img = cfg["image"]
    return (
        np.stack([render(list(p.steps), img["height"], img["width"], img["max_font"])[0] for p in problems]).astype(
            np.float32
        )
        / 255.0
    )


def embed(lm: LanguageModel, text: str) -> torch.Tensor:
    ids = torch.tensor([lm.tokenizer(text, add_special_tokens=False).input_ids])
    return lm.model.get_input_embeddings()(ids)[0]


def prefix(lm: LanguageModel, question: str, latents: torch.Tensor | None) -> torch.Tensor:
    """Input embeddings: the chat prompt with the question, the projected latents (if any), the answer cue."""
    parts = [embed(lm, lm.chat_prompt(question))]
    if latents is not None:
        parts.append(latents)
    parts.append(embed(lm, ANSWER_CUE))
    return torch.cat(parts)


def answer_loss(
    lm: LanguageModel, projector: torch.nn.Module, question: str, codes: torch.Tensor, answer: str
) -> torch.Tensor:
    target = torch.tensor(lm.tokenizer(" " + answer, add_special_tokens=False).input_ids)
    context = prefix(lm, question, projector(codes))
    full = torch.cat([context, lm.model.get_input_embeddings()(target)])
    logits = lm.model(inputs_embeds=full[None]).logits[0, len(context) - 1 : -1]
    return F.cross_entropy(logits, target)


def question_state(lm: LanguageModel, question: str) -> torch.Tensor:
    """The frozen LM's last-layer hidden state at the end of the chat prompt holding ``question``."""
    with torch.no_grad():
        out = lm.model(inputs_embeds=embed(lm, lm.chat_prompt(question))[None], output_hidden_states=True)
    return out.hidden_states[-1][0, -1]


def greedy_answer(lm: LanguageModel, context: torch.Tensor, max_new_tokens: int) -> str:
    with torch.no_grad():
        out = lm.model.generate(
            inputs_embeds=context[None],
            max_new_tokens=max_new_tokens,
            do_sample=False,
            pad_token_id=lm.tokenizer.pad_token_id,
            eos_token_id=lm.tokenizer.eos_token_id,
        )
    text = lm.tokenizer.decode(out[0], skip_special_tokens=True).strip()
    return text.split()[0].rstrip(".,") if text else ""


def run(lm: LanguageModel, gsm_root: str, cfg: dict, seed: int) -> dict:
    seed_everything(seed)
    for p in lm.model.parameters():
        p.requires_grad_(False)
    problems = gsm_problems(gsm_root, cfg["n_train"] + cfg["n_test"], cfg["data_seed"])
    images = torch.from_numpy(render_all(problems, cfg))
    lat = cfg["latent"]
    vq = ImageVQ(lat["n_latent"], lat["codebook"], lat["dim"], cfg["image"]["height"], cfg["image"]["width"])
    opt = torch.optim.AdamW(vq.parameters(), lr=cfg["tokenizer"]["lr"])
    train_idx = np.arange(cfg["n_train"])
    rng = np.random.default_rng(seed)
    for _ in range(cfg["tokenizer"]["steps"]):
        batch = images[rng.choice(train_idx, min(len(train_idx), cfg["tokenizer"]["batch"]), replace=False)]
        opt.zero_grad()
        image_loss(vq, batch).backward()
        opt.step()
    train_images = images[: cfg["n_train"]]  # only the training problems' worked answers are ever encoded
    with torch.no_grad():
        latents, codes, _ = vq.encode(train_images)
    hidden = lm.model.config.hidden_size
    projector = torch.nn.Linear(lat["dim"], hidden)
    opt = torch.optim.AdamW(projector.parameters(), lr=cfg["projector"]["lr"])
    for _ in range(cfg["projector"]["steps"]):
        i = int(rng.choice(train_idx))
        opt.zero_grad()
        answer_loss(lm, projector, problems[i].question, latents[i], problems[i].answer).backward()
        opt.step()
    states = torch.stack([question_state(lm, p.question) for p in problems])
    head = torch.nn.Linear(hidden, lat["n_latent"] * lat["codebook"])
    opt = torch.optim.AdamW(head.parameters(), lr=cfg["generator"]["lr"])
    for _ in range(cfg["generator"]["steps"]):
        opt.zero_grad()
        logits = head(states[train_idx]).reshape(len(train_idx), lat["n_latent"], lat["codebook"])
        F.cross_entropy(logits.reshape(-1, lat["codebook"]), codes.reshape(-1)).backward()
        opt.step()
    test = range(cfg["n_train"], len(problems))
    correct = {"no_cot": [], "imgcot": []}
    with torch.no_grad():
        generated = head(states[list(test)]).reshape(len(test), lat["n_latent"], lat["codebook"]).argmax(-1)
        for j, i in enumerate(test):
            q, a = problems[i].question, problems[i].answer
            correct["no_cot"].append(greedy_answer(lm, prefix(lm, q, None), cfg["max_new_tokens"]) == a)
            latent = projector(vq.vq.codes(generated[j]))
            correct["imgcot"].append(greedy_answer(lm, prefix(lm, q, latent), cfg["max_new_tokens"]) == a)
    return {
        "model_sha256": lm.sha256,
        "accuracy": {k: float(np.mean(v)) for k, v in correct.items()},
        "reasoning_tokens": {"no_cot": 0, "imgcot": lat["n_latent"]},
        "full_cot_text_tokens": float(
            np.mean([len(lm.tokenizer("\n".join(problems[i].steps)).input_ids) for i in test])
        ),
        "n_test": len(test),
        "test_latents": "generated from the question by the latent head (never encoded from the test answer)",
    }


def main(job) -> None:
    cfg = job.params.settings["smollm2"]
    torch.set_num_threads(int(getattr(job, "threads", 1) or 1))
    write_json(job.output.smollm2, run(smollm2(job.input.model), job.input.gsm, cfg, job.params.seed))
