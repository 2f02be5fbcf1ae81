/* test_llama_cli.c -- the ggmlr-llama program end to end on a tiny
 * generated model: tiny, generate (with and without an adapter), logits, finetune
 * (progress lines, the adapter written, a resumed run writing the same
 * adapter bit for bit), merge (the same model as finetune --merge-out), --grad-checkpoint (the same adapter), and exit status 2 with nothing written for wrong
 * arguments, missing files and data that is empty or not text. */
#include "common/test_common.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[] = "/tmp/ggmlr_cli_XXXXXX";

/* Runs ggmlr-llama with args in dir, output in dir/out.txt; its exit status. */
static int run(const char * args) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "cd %s && %s %s > out.txt 2>&1", dir, GGMLR_LLAMA_CLI, args);
    const int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The last run's output (at most cap - 1 bytes), NUL-terminated. */
static void read_output(char * buf, size_t cap) {
    char path[300];
    snprintf(path, sizeof path, "%s/out.txt", dir);
    FILE * f = fopen(path, "rb");
    const size_t n = f ? fread(buf, 1, cap - 1, f) : 0;
    if (f) fclose(f);
    buf[n] = '\0';
}

static bool output_has(const char * what) {
    char buf[65536];
    read_output(buf, sizeof buf);
    return strstr(buf, what) != NULL;
}

static bool exists(const char * name) {
    char path[300];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

static bool same_files(const char * a, const char * b) {
    char cmd[700];
    snprintf(cmd, sizeof cmd, "cmp -s %s/%s %s/%s", dir, a, dir, b);
    return system(cmd) == 0;
}

static void write_file(const char * name, const char * data, size_t n) {
    char path[300];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE * f = fopen(path, "wb");
    if (f) { fwrite(data, 1, n, f); fclose(f); }
}

#define EXPECT_RUN(status, args, text) CHECK(run(args) == (status) && output_has(text), "ggmlr-llama %s: expected status %d and '%s'", args, status, text)

int main(void) {
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
    EXPECT_RUN(0, "--help", "finetune");
    EXPECT_RUN(0, "generate --help", "--top-p");
    EXPECT_RUN(0, "finetune --help", "--resume");
    EXPECT_RUN(2, "", "usage");
    EXPECT_RUN(2, "fly", "unknown command");
    EXPECT_RUN(0, "tiny -o m.gguf --embd 64 --ff 64 --layers 2 --heads 4 --kv-heads 2 --ctx 64 --type q8_0", "wrote m.gguf");
    EXPECT_RUN(2, "tiny -o bad.gguf --type q9_9", "unknown type");
    CHECK(!exists("bad.gguf"), "tiny: a file was written for a bad type");
    EXPECT_RUN(0, "generate -m m.gguf -p 'the cat' -n 8 --seed 3 -t 2", "tokens/s");
    EXPECT_RUN(2, "generate -p hello", "-m MODEL.gguf is required");
    EXPECT_RUN(2, "generate -m absent.gguf", "cannot load absent.gguf");
    EXPECT_RUN(2, "generate -m m.gguf -n x", "is not a number");
    EXPECT_RUN(2, "generate -m m.gguf --bogus 1", "unknown option");
    EXPECT_RUN(2, "generate -m m.gguf -n 100", "do not fit the context");
    EXPECT_RUN(2, "generate -m out.txt", "cannot load out.txt");

    /* a text of 24 repetitions of a few sentences */
    char text[8192] = "";
    for (int i = 0; i < 24; i++) strcat(text, "the cat sat on the mat and then the dog ran in the garden. ");
    write_file("text.txt", text, strlen(text));
    const char * ft = "finetune -m m.gguf --data text.txt --iters 12 --ctx 16 --batch 2 --accum 2 --lr 1e-2 --warmup 2 --eval-every 6 --eval-batches 2 --log-every 3 -t 2";
    char args[1024];
    snprintf(args, sizeof args, "%s -o a.gguf --checkpoint c6.gguf --save-every 6", ft);
    EXPECT_RUN(0, args, "validation loss");
    CHECK(output_has("step    12/12") && output_has("wrote the adapter a.gguf") && exists("a.gguf") && exists("c6.gguf"), "finetune: progress and files");
    /* interrupted after step 5, then resumed: the same adapter bit for bit */
    snprintf(args, sizeof args, "%s -o half.gguf --checkpoint c5.gguf --stop-after 5", ft);
    CHECK(run(args) == 0 && output_has("step     5  validation loss") && exists("c5.gguf") && !same_files("a.gguf", "half.gguf"), "finetune: stop after 5");
    snprintf(args, sizeof args, "%s -o b.gguf --resume c5.gguf --merge-out fm.gguf", ft);
    CHECK(run(args) == 0 && output_has("resumed from c5.gguf at step 5") && output_has("wrote the merged model fm.gguf"), "finetune: resume");
    CHECK(same_files("a.gguf", "b.gguf"), "finetune: the resumed run's adapter differs from the uninterrupted run's");
    snprintf(args, sizeof args, "%s -o gc.gguf --grad-checkpoint", ft);
    CHECK(run(args) == 0 && same_files("a.gguf", "gc.gguf"), "finetune --grad-checkpoint: the adapter differs from the run without");
    EXPECT_RUN(0, "generate -m m.gguf --lora a.gguf -p 'the cat' -n 4 --temp 0 -t 2", "tokens/s");

    /* merge: the same model as finetune --merge-out; it generates; a wrong
     * adapter or file is refused with nothing written */
    EXPECT_RUN(0, "merge --help", "re-quantized");
    EXPECT_RUN(0, "merge -m m.gguf --lora a.gguf -o merged.gguf", "wrote merged.gguf");
    CHECK(same_files("fm.gguf", "merged.gguf") && !same_files("m.gguf", "merged.gguf"), "merge: differs from finetune --merge-out or from the base");
    EXPECT_RUN(0, "generate -m merged.gguf -p 'the cat' -n 4 --temp 0 -t 2", "tokens/s");
    EXPECT_RUN(0, "tiny -o qwen.gguf --arch qwen2 --embd 64 --ff 64 --layers 2 --ctx 64", "wrote qwen.gguf");
    EXPECT_RUN(0, "tiny -o narrow.gguf --embd 32 --ff 64 --layers 2 --ctx 64", "wrote narrow.gguf");
    static const char * const refused[][2] = {  /* arguments, the message expected */
        {"-m qwen.gguf --lora a.gguf -o y.gguf", "general.architecture is not 'qwen2'"},
        {"-m narrow.gguf --lora a.gguf -o y.gguf", "blk.0.attn_q.weight.lora_a is missing, not F32 or not [32, 8]"},
        {"-m m.gguf --lora absent.gguf -o y.gguf", "cannot load absent.gguf"},
        {"-m absent.gguf --lora a.gguf -o y.gguf", "cannot load absent.gguf"},
        {"-m m.gguf --lora m.gguf -o y.gguf", "general.type is not 'adapter'"},
        {"-m m.gguf -o y.gguf", "required"},
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        snprintf(args, sizeof args, "merge %s", refused[i][0]);
        EXPECT_RUN(2, args, refused[i][1]);
    }
    CHECK(!exists("y.gguf"), "merge: a file was written after an error");

    /* full training: the model written in its type, it generates; a quantized model or --merge-out refused */
    snprintf(args, sizeof args, "finetune --full -m narrow.gguf --data text.txt --iters 2 --ctx 16 --batch 2 --eval-every 2 --eval-batches 1 -t 2 -o full.gguf");
    EXPECT_RUN(0, args, "wrote the model full.gguf");
    CHECK(output_has("all ") && output_has("weights (21 tensors)"), "finetune --full: the weights named");
    EXPECT_RUN(0, "generate -m full.gguf -p 'the cat' -n 4 --temp 0 -t 2", "tokens/s");
    EXPECT_RUN(2, "finetune --full -m m.gguf --data text.txt -o z.gguf", "token_embd.weight is q8_0: full training needs F32, F16 or BF16");
    EXPECT_RUN(2, "finetune --full -m narrow.gguf --data text.txt -o z.gguf --merge-out z2.gguf", "--merge-out is for LoRA");
    CHECK(!exists("z.gguf") && !exists("z2.gguf"), "finetune --full: a file was written after an error");

    /* prompt/response JSONL, by its extension or --format: the loss on the responses */
    char pairs[4096] = "";
    for (int i = 0; i < 40; i++) strcat(pairs, "{\"prompt\": \"the cat sat on\", \"response\": \" the mat\"}\n");
    write_file("pairs.jsonl", pairs, strlen(pairs));
    write_file("pairs.txt", pairs, strlen(pairs));
    const char * fj = "finetune -m m.gguf --iters 4 --ctx 16 --batch 2 --eval-every 4 --eval-batches 1 -t 2";
    snprintf(args, sizeof args, "%s --data pairs.jsonl -o j.gguf", fj);
    EXPECT_RUN(0, args, "40 prompt/response pairs (36 for training)");
    CHECK(exists("j.gguf") && output_has("validation loss"), "finetune: the JSONL run's adapter");
    snprintf(args, sizeof args, "%s --data pairs.txt --format jsonl -o j2.gguf", fj);
    EXPECT_RUN(0, args, "the loss is on those only");
    CHECK(same_files("j.gguf", "j2.gguf"), "finetune: --format jsonl differs from the .jsonl extension");

    /* logits: --all prints a line of n_vocab (306, tiny's) numbers per
     * token; the last one is what the run without --all prints */
    char all[65536], last[16384];
    EXPECT_RUN(0, "logits -m m.gguf --tokens 1,76,107 --all -t 1", "\n");
    read_output(all, sizeof all);
    EXPECT_RUN(0, "logits -m m.gguf --tokens 1,76,107 -t 1", "\n");
    read_output(last, sizeof last);
    const char * third = strchr(all, '\n');
    third = third ? strchr(third + 1, '\n') : NULL;
    CHECK(third && strcmp(third + 1, last) == 0, "logits: the last of --all's lines is not the run without --all");
    int numbers = 0, lines = 0;
    for (const char * p = all; *p; p++) { numbers += *p == ' ' || *p == '\n'; lines += *p == '\n'; }
    CHECK(lines == 3 && numbers == 3 * 306, "logits --all: %d lines, %d numbers (want 3, 918)", lines, numbers);
    EXPECT_RUN(2, "logits -m m.gguf --tokens 1,306", "below n_vocab 306");
    EXPECT_RUN(2, "logits -m m.gguf --tokens 1,,2", "comma list");
    EXPECT_RUN(2, "logits -m m.gguf", "required");

    /* bad data and arguments: status 2, nothing written */
    write_file("empty.txt", "", 0);
    write_file("binary.txt", "ab\0cd", 5);
    write_file("latin1.txt", "caf\xe9", 4);
    EXPECT_RUN(2, "finetune -m m.gguf --data empty.txt -o x.gguf", "is empty");
    EXPECT_RUN(2, "finetune -m m.gguf --data binary.txt -o x.gguf", "not text");
    EXPECT_RUN(2, "finetune -m m.gguf --data latin1.txt -o x.gguf", "not UTF-8");
    EXPECT_RUN(2, "finetune -m m.gguf --data absent.txt -o x.gguf", "cannot open absent.txt");
    write_file("bad.jsonl", "{\"prompt\": \"a\", \"response\": \"b\"}\n\n{\"prompt\": \"a\", \"response\": \"b\\q\"}\n", 69);
    EXPECT_RUN(2, "finetune -m m.gguf --data bad.jsonl -o x.gguf", "bad.jsonl:3: column 31: an unknown escape");
    EXPECT_RUN(2, "finetune -m m.gguf --data text.txt --format jsonl -o x.gguf", "text.txt:1: column 1: expected a JSON object");
    EXPECT_RUN(2, "finetune -m m.gguf --data text.txt --format csv -o x.gguf", "--format 'csv'");
    EXPECT_RUN(2, "finetune -m m.gguf --data text.txt -o x.gguf --targets q,w", "--targets");
    EXPECT_RUN(2, "finetune -m m.gguf --data text.txt -o x.gguf --rank 0", "out of range");
    EXPECT_RUN(2, "finetune -m m.gguf --data text.txt -o x.gguf --ctx 1000", "context");
    EXPECT_RUN(2, "finetune -m m.gguf --data text.txt", "required");
    EXPECT_RUN(2, "generate -m m.gguf --lora text.txt", "cannot load text.txt");
    CHECK(!exists("x.gguf"), "finetune: an adapter was written after an error");

    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return tc_finish("test_llama_cli");
}
