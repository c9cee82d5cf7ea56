#include "lessonlib/lesson_expr.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "core/util/error.h"
#include "core/util/utf8.h"

namespace kvs {

struct ExprNode {
    enum class Op { Const, Metric, Neg, Add, Sub, Mul, Div };
    Op op = Op::Const;
    LessonValue value;  // Const
    std::string name;   // Metric
    std::vector<std::shared_ptr<const ExprNode>> kids;
};

std::string LessonValue::to_string() const {
    if (kind == Kind::None) return "none";
    if (kind == Kind::String) return "\"" + str + "\"";
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.6g", num);
    return buf;
}

namespace {

using Node = std::shared_ptr<const ExprNode>;

constexpr std::size_t kMaxCheckTokens = 501;  // 500 and the end marker

struct Token {
    enum class Kind { Number, String, Name, Punct, End };
    Kind kind = Kind::End;
    std::string text;  // name, punctuation, or the string's contents
    double num = 0;
};

std::vector<Token> lex(std::string_view s) {
    std::vector<Token> out;
    std::size_t i = 0;
    while (i < s.size()) {
        const char c = s[i];
        if (std::isspace(static_cast<unsigned char>(c))) {
            ++i;
        } else if (std::isdigit(static_cast<unsigned char>(c)) ||
                   (c == '.' && i + 1 < s.size() &&
                    std::isdigit(static_cast<unsigned char>(s[i + 1])))) {
            const std::string rest(s.substr(i));
            char* end = nullptr;
            const double v = std::strtod(rest.c_str(), &end);
            out.push_back({Token::Kind::Number, rest.substr(0, end - rest.c_str()), v});
            i += end - rest.c_str();
        } else if (c == '"') {
            const auto close = s.find('"', i + 1);
            if (close == std::string_view::npos) throw Error("unterminated string");
            out.push_back({Token::Kind::String, std::string(s.substr(i + 1, close - i - 1)), 0});
            i = close + 1;
        } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
            std::size_t j = i;
            while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_'))
                ++j;
            out.push_back({Token::Kind::Name, std::string(s.substr(i, j - i)), 0});
            i = j;
        } else {
            static const char* two[] = {"==", "!=", "<=", ">="};
            std::string_view p = s.substr(i, 1);
            for (const char* t : two)
                if (s.substr(i, 2) == t) p = s.substr(i, 2);
            if (p.size() == 1 && std::string_view("+-*/(),<>").find(c) == std::string_view::npos)
                throw Error(std::string("unexpected character '") + c + "'");
            out.push_back({Token::Kind::Punct, std::string(p), 0});
            i += p.size();
        }
    }
    out.push_back({});
    // Parsing, evaluating and freeing an expression recurse once per level: a bound on its size
    // keeps a hostile lesson file from overflowing the stack (`((((...` or `1+1+...` a megabyte
    // long). Real checks are a few dozen tokens.
    if (out.size() > kMaxCheckTokens)
        throw Error("the check is too long: " + std::to_string(out.size() - 1) +
                    " tokens, at most " + std::to_string(kMaxCheckTokens - 1));
    return out;
}

class Parser {
  public:
    Parser(std::vector<Token> toks, const MetricValidator& v)
        : tokens_(std::move(toks)), validate_(v) {}

    bool at_punct(const char* p) const {
        return tokens_[next_].kind == Token::Kind::Punct && tokens_[next_].text == p;
    }
    bool at_name(const char* n) const {
        return tokens_[next_].kind == Token::Kind::Name && tokens_[next_].text == n;
    }
    bool at_end() const { return tokens_[next_].kind == Token::Kind::End; }
    const Token& next() { return tokens_[next_++]; }
    std::string where() const {
        return at_end() ? "at the end" : "at '" + tokens_[next_].text + "'";
    }
    void expect_punct(const char* p) {
        if (!at_punct(p)) throw Error(std::string("expected '") + p + "' " + where());
        ++next_;
    }

    Node sum() {
        Node n = prod();
        while (at_punct("+") || at_punct("-")) {
            const bool add = next().text == "+";
            n = binary(add ? ExprNode::Op::Add : ExprNode::Op::Sub, n, prod());
        }
        return n;
    }

  private:
    static Node binary(ExprNode::Op op, Node a, Node b) {
        auto n = std::make_shared<ExprNode>();
        n->op = op;
        n->kids = {std::move(a), std::move(b)};
        return n;
    }
    Node prod() {
        Node n = unary();
        while (at_punct("*") || at_punct("/")) {
            const bool mul = next().text == "*";
            n = binary(mul ? ExprNode::Op::Mul : ExprNode::Op::Div, n, unary());
        }
        return n;
    }
    Node unary() {
        auto n = std::make_shared<ExprNode>();
        if (at_punct("-")) {
            ++next_;
            n->op = ExprNode::Op::Neg;
            n->kids = {unary()};
            return n;
        }
        if (at_punct("(")) {
            ++next_;
            Node inner = sum();
            expect_punct(")");
            return inner;
        }
        const Token& t = tokens_[next_];
        switch (t.kind) {
            case Token::Kind::Number:
                n->value = LessonValue::number(next().num);
                return n;
            case Token::Kind::String:
                n->value = LessonValue::string(next().text);
                return n;
            case Token::Kind::Name:
                break;
            default:
                throw Error("expected a value " + where());
        }
        n->name = next().text;
        if (n->name == "none") return n;  // Const none
        if (n->name == "within") throw Error("expected a value before 'within'");
        n->op = ExprNode::Op::Metric;
        if (at_punct("(")) {
            ++next_;
            if (!at_punct(")")) {
                n->kids.push_back(sum());
                while (at_punct(",")) {
                    ++next_;
                    n->kids.push_back(sum());
                }
            }
            expect_punct(")");
        }
        if (validate_) {
            const std::string why = validate_(n->name, static_cast<int>(n->kids.size()));
            if (!why.empty()) throw Error(why);
        }
        return n;
    }

    std::vector<Token> tokens_;
    std::size_t next_ = 0;
    const MetricValidator& validate_;
};

LessonValue eval(const ExprNode& n, const MetricReader& read) {
    using Op = ExprNode::Op;
    switch (n.op) {
        case Op::Const:
            return n.value;
        case Op::Metric: {
            std::vector<LessonValue> args;
            for (const auto& k : n.kids) args.push_back(eval(*k, read));
            return read(n.name, args);
        }
        default:
            break;
    }
    const LessonValue a = eval(*n.kids[0], read);
    if (!a.is_number()) throw Error("arithmetic on " + a.to_string());
    if (n.op == Op::Neg) return LessonValue::number(-a.num);
    const LessonValue b = eval(*n.kids[1], read);
    if (!b.is_number()) throw Error("arithmetic on " + b.to_string());
    switch (n.op) {
        case Op::Add:
            return LessonValue::number(a.num + b.num);
        case Op::Sub:
            return LessonValue::number(a.num - b.num);
        case Op::Mul:
            return LessonValue::number(a.num * b.num);
        default:
            return LessonValue::number(a.num / b.num);
    }
}

// A plain number: a constant, or a minus sign before one (-1 parses as Neg(1)).
bool literal_number(const ExprNode& n, double& out) {
    if (n.op == ExprNode::Op::Const && n.value.is_number()) {
        out = n.value.num;
        return true;
    }
    if (n.op == ExprNode::Op::Neg && literal_number(*n.kids[0], out)) {
        out = -out;
        return true;
    }
    return false;
}

// A Chinese sentence's spaces: none between two Chinese characters (or full-width punctuation),
// one kept between Chinese and a Latin word, a number or a symbol ("乘以 2", "× 层数").
bool cjk(char32_t c) {
    return (c >= 0x3000 && c <= 0x9FFF) || (c >= 0xFF00 && c <= 0xFFEF) ||
           (c >= 0x2018 && c <= 0x201F);  // “ ” ‘ ’ as a Chinese sentence uses them
}
bool ideograph(char32_t c) {
    return c >= 0x3400 && c <= 0x9FFF;
}
char32_t code_point_at(const std::string& s, std::size_t i, std::size_t* len) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const int n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    *len = std::min<std::size_t>(static_cast<std::size_t>(n), s.size() - i);
    if (n == 1) return c;
    char32_t v = c & (0x3F >> (n - 1));
    for (std::size_t k = 1; k < *len; ++k)
        v = (v << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    return v;
}
std::string zh_spacing(const std::string& s) {
    std::string out;
    char32_t prev = 0;
    for (std::size_t i = 0; i < s.size();) {
        std::size_t len = 1;
        const char32_t c = code_point_at(s, i, &len);
        if (c == ' ' && cjk(prev)) {
            std::size_t j = i;
            while (j < s.size() && s[j] == ' ') ++j;
            std::size_t next_len = 1;
            if (j < s.size() && cjk(code_point_at(s, j, &next_len))) {
                i = j;  // the next character is Chinese too: no space
                continue;
            }
        }
        out.append(s, i, len);
        if (c != ' ') prev = c;
        i += len;
    }
    return out;
}

// One space between a Chinese character and a Latin word or a number on either side ("token 数",
// "等于 4"); none next to full-width punctuation ("0.0001）").
std::string tidy_mixed(const std::string& s) {
    std::string out;
    char32_t prev = 0;
    for (std::size_t i = 0; i < s.size();) {
        std::size_t len = 1;
        const char32_t c = code_point_at(s, i, &len);
        const bool latin = c < 0x80 && std::isalnum(static_cast<int>(c));
        const bool prev_latin = prev < 0x80 && prev != 0 && std::isalnum(static_cast<int>(prev));
        if ((latin && ideograph(prev)) || (ideograph(c) && prev_latin)) out += ' ';
        out.append(s, i, len);
        prev = c;
        i += len;
    }
    return out;
}

// A string value in the sentence: the metric's words for it where `value` has any, else quoted
// (Chinese quotation marks in a Chinese sentence).
std::string string_words(const LessonValue& v, const ExprNode* metric, const ValuePhrase& value,
                         const Words& w) {
    if (metric && value) {
        std::string arg;
        if (!metric->kids.empty() && metric->kids[0]->op == ExprNode::Op::Const &&
            metric->kids[0]->value.is_string())
            arg = metric->kids[0]->value.str;
        const std::string words = value(metric->name, arg, v);
        if (!words.empty()) return words;
    }
    return w.zh() ? "\xE2\x80\x9C" + v.str + "\xE2\x80\x9D" : v.to_string();
}

std::string words_of(const ExprNode& n, const MetricPhrase& phrase, const Words& w) {
    using Op = ExprNode::Op;
    double v = 0;
    if (literal_number(n, v)) return LessonValue::number(v).to_string();
    switch (n.op) {
        case Op::Const:
            if (n.value.is_none()) return w("none", "无");
            return n.value.is_string() ? string_words(n.value, nullptr, {}, w)
                                       : n.value.to_string();
        case Op::Metric: {
            std::vector<std::string> args;
            std::vector<double> values(n.kids.size());
            std::vector<const double*> numbers;
            for (std::size_t i = 0; i < n.kids.size(); ++i) {
                args.push_back(words_of(*n.kids[i], phrase, w));
                numbers.push_back(literal_number(*n.kids[i], values[i]) ? &values[i] : nullptr);
            }
            return phrase(n.name, args, numbers);
        }
        case Op::Neg:
            return w("minus ", "负") + words_of(*n.kids[0], phrase, w);
        default:
            break;
    }
    // A sum inside a product or quotient, or on the right of a minus, keeps its brackets.
    const auto side = [&](const ExprNode& k, bool right) {
        const bool low = k.op == Op::Add || k.op == Op::Sub;
        const bool wrap = low && (n.op == Op::Mul || n.op == Op::Div || (right && n.op == Op::Sub));
        const bool wrap_div = right && n.op == Op::Div && (k.op == Op::Mul || k.op == Op::Div);
        const std::string t = words_of(k, phrase, w);
        return wrap || wrap_div ? w("(", "（") + t + w(")", "）") : t;
    };
    const std::string a = side(*n.kids[0], false), b = side(*n.kids[1], true);
    // 31/3 reads as a fraction; a quotient of quantities in words.
    double x = 0, y = 0;
    if (n.op == Op::Div && literal_number(*n.kids[0], x) && literal_number(*n.kids[1], y))
        return a + "/" + b;
    // Chinese: the operator between the words without spaces (zh_spacing keeps one next to a
    // number or a Latin word), × for a product as a Chinese formula writes it.
    switch (n.op) {
        case Op::Add:
            return a + w(" plus ", " 加 ") + b;
        case Op::Sub:
            return a + w(" minus ", " 减 ") + b;
        case Op::Mul:
            return a + w(" times ", " \xC3\x97 ") + b;
        default:
            return a + w(" divided by ", " 除以 ") + b;
    }
}

const ExprNode* as_metric(const ExprNode& n) {
    return n.op == ExprNode::Op::Metric ? &n : nullptr;
}

}  // namespace

LessonExpr LessonExpr::parse(std::string_view text, const MetricValidator& validate) {
    LessonExpr e;
    e.text_ = std::string(text);
    Parser p(lex(text), validate);
    if (p.at_end()) throw Error("expected an expression, e.g. rows");
    e.root_ = p.sum();
    if (!p.at_end()) {
        static const char* cmps[] = {"==", "!=", "<=", ">=", "<", ">"};
        bool cmp = false;
        for (const char* c : cmps) cmp = cmp || p.at_punct(c);
        if (!cmp) throw Error("unexpected " + p.where().substr(3));
        e.compare_ = std::make_shared<const Expectation>(Expectation::parse(text, validate));
    }
    return e;
}

LessonValue LessonExpr::evaluate(const MetricReader& read) const {
    if (compare_) {
        const Expectation::Outcome o = compare_->evaluate(read);
        if (!o.compared) throw Error(o.why);
        return LessonValue::number(o.pass ? 1 : 0);
    }
    return eval(*root_, read);
}

std::string LessonExpr::metric() const {
    if (compare_) return {};
    return root_ && root_->op == ExprNode::Op::Metric ? root_->name : std::string();
}

std::string LessonExpr::metric_arg() const {
    if (metric().empty() || root_->kids.empty()) return {};
    const ExprNode& a = *root_->kids[0];
    return a.op == ExprNode::Op::Const && a.value.is_string() ? a.value.str : std::string();
}

std::string LessonExpr::in_words(const MetricPhrase& phrase, ReportLang lang) const {
    if (compare_) return compare_->in_words(phrase, lang);
    const Words w{lang};
    const std::string s = words_of(*root_, phrase, w);
    return escape_for_one_line(w.zh() ? zh_spacing(tidy_mixed(s)) : s);
}

std::string Expectation::in_words(const MetricPhrase& phrase, ReportLang lang,
                                  const ValuePhrase& value) const {
    const Words w{lang};
    // A string constant on one side, a metric on the other: the value in that metric's words.
    const auto side = [&](const ExprNode& self, const ExprNode& other) {
        if (self.op == ExprNode::Op::Const && self.value.is_string())
            return string_words(self.value, as_metric(other), value, w);
        return words_of(self, phrase, w);
    };
    const std::string a = side(*lhs_, *rhs_), b = side(*rhs_, *lhs_);
    const bool strings = (lhs_->op == ExprNode::Op::Const && lhs_->value.is_string()) ||
                         (rhs_->op == ExprNode::Op::Const && rhs_->value.is_string());
    const auto join = [&](const char* en, const char* zh) { return a + w(en, zh) + b; };
    std::string s;
    if (tol_) {
        const std::string t = words_of(*tol_, phrase, w);
        s = cmp_ == Cmp::Eq
                ? join(" is ", "等于") + w(", to within ", "（误差不超过 ") + t + w("", "）")
                : join(" differs from ", "与") + w(" by more than ", "相差超过 ") + t;
    } else {
        // Chinese: a word is 是 another word; a quantity 等于 another.
        static const char* en[] = {" is ",         " is not ",       " is less than ",
                                   " is at most ", " is more than ", " is at least "};
        static const char* zh[] = {"等于", "不等于", "小于", "不超过", "大于", "不少于"};
        const int k = static_cast<int>(cmp_);
        s = strings && (cmp_ == Cmp::Eq || cmp_ == Cmp::Ne)
                ? join(en[k], cmp_ == Cmp::Eq ? "是" : "不是")
                : join(en[k], zh[k]);
    }
    if (w.zh()) s = zh_spacing(tidy_mixed(s));
    if (!w.zh() && !s.empty() && s[0] >= 'a' && s[0] <= 'z')
        s[0] = static_cast<char>(s[0] - 'a' + 'A');
    return escape_for_one_line(s);
}

std::string Expectation::side_metric(bool left, std::string* arg) const {
    const ExprNode* self = (left ? lhs_ : rhs_).get();
    const ExprNode* other = (left ? rhs_ : lhs_).get();
    const ExprNode* m = as_metric(*self) ? self : as_metric(*other);
    if (arg) arg->clear();
    if (!m) return {};
    if (arg && !m->kids.empty() && m->kids[0]->op == ExprNode::Op::Const &&
        m->kids[0]->value.is_string())
        *arg = m->kids[0]->value.str;
    return m->name;
}

Expectation Expectation::parse(std::string_view text, const MetricValidator& validate) {
    Expectation e;
    e.text_ = std::string(text);
    Parser p(lex(text), validate);
    if (p.at_end()) throw Error("@expect needs a comparison, e.g. token == \"nice\"");
    e.lhs_ = p.sum();
    static const std::pair<const char*, Cmp> ops[] = {{"==", Cmp::Eq}, {"!=", Cmp::Ne},
                                                      {"<=", Cmp::Le}, {">=", Cmp::Ge},
                                                      {"<", Cmp::Lt},  {">", Cmp::Gt}};
    bool found = false;
    for (const auto& [s, c] : ops)
        if (p.at_punct(s)) {
            e.cmp_ = c;
            found = true;
            p.next();
            break;
        }
    if (!found) throw Error("expected a comparison (== != < <= > >=) " + p.where());
    e.rhs_ = p.sum();
    if (p.at_name("within")) {
        p.next();
        if (e.cmp_ != Cmp::Eq && e.cmp_ != Cmp::Ne) throw Error("'within' goes with == or != only");
        e.tol_ = p.sum();
    }
    if (!p.at_end()) throw Error("unexpected " + p.where().substr(3));
    return e;
}

Expectation::Outcome Expectation::evaluate(const MetricReader& read) const {
    Outcome o;
    try {
        o.lhs = eval(*lhs_, read);
        o.rhs = eval(*rhs_, read);
        const LessonValue& a = o.lhs;
        const LessonValue& b = o.rhs;
        if (a.is_number() && b.is_number()) {
            if (tol_) {
                const LessonValue t = eval(*tol_, read);
                if (!t.is_number()) throw Error("'within' needs a number");
                const bool close = std::fabs(a.num - b.num) <= t.num;
                o.pass = cmp_ == Cmp::Eq ? close : !close;
            } else {
                switch (cmp_) {
                    case Cmp::Eq:
                        o.pass = a.num == b.num;
                        break;
                    case Cmp::Ne:
                        o.pass = a.num != b.num;
                        break;
                    case Cmp::Lt:
                        o.pass = a.num < b.num;
                        break;
                    case Cmp::Le:
                        o.pass = a.num <= b.num;
                        break;
                    case Cmp::Gt:
                        o.pass = a.num > b.num;
                        break;
                    case Cmp::Ge:
                        o.pass = a.num >= b.num;
                        break;
                }
            }
        } else {
            // Strings and none compare only for (in)equality; a number never equals none.
            if (cmp_ != Cmp::Eq && cmp_ != Cmp::Ne)
                throw Error("cannot order " + a.to_string() + " and " + b.to_string());
            const bool same = a.kind == b.kind && a.str == b.str && a.num == b.num;
            o.pass = cmp_ == Cmp::Eq ? same : !same;
        }
        o.compared = true;
        if (!o.pass) o.why = "got " + a.to_string() + " against " + b.to_string();
    } catch (const Error& err) {
        o.pass = false;
        o.why = err.what();
    }
    // One line whatever the lesson's strings or the metrics' values hold (a string literal may
    // carry a newline or an escape sequence; fuzz_lesson_expr makes such strings).
    o.why = escape_for_one_line(o.why);
    return o;
}

}  // namespace kvs
