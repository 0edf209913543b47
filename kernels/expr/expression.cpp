#include "kernels/expr/expression.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <initializer_list>
#include <utility>

namespace ukes::expr {

namespace {

struct Token {
  enum class Kind { kNumber, kName, kSymbol, kEnd };
  Kind kind = Kind::kEnd;
  std::string text;
  double value = 0;
  int column = 0;
};

class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) {}

  Token next() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t')) ++pos_;
    Token t;
    t.column = static_cast<int>(pos_) + 1;
    if (pos_ >= text_.size()) return t;
    const char c = text_[pos_];
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') return number(t);
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      const std::size_t start = pos_;
      while (pos_ < text_.size() &&
             (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
        ++pos_;
      t.kind = Token::Kind::kName;
      t.text = std::string(text_.substr(start, pos_ - start));
      return t;
    }
    static constexpr std::string_view kTwo[] = {"<=", ">=", "==", "!=", "&&", "||"};
    for (std::string_view two : kTwo) {
      if (text_.substr(pos_, 2) == two) {
        pos_ += 2;
        t.kind = Token::Kind::kSymbol;
        t.text = std::string(two);
        return t;
      }
    }
    if (std::string_view("+-*/^(),<>!").find(c) == std::string_view::npos)
      throw ExpressionError(t.column, "unexpected character " + quoted_text(text_.substr(pos_, 1)));
    ++pos_;
    t.kind = Token::Kind::kSymbol;
    t.text = std::string(1, c);
    return t;
  }

 private:
  Token number(Token t) {
    const std::size_t start = pos_;
    const auto digits = [&] {
      const std::size_t from = pos_;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
      return pos_ > from;
    };
    const bool whole = digits();
    bool fraction = false;
    if (pos_ < text_.size() && text_[pos_] == '.') {
      ++pos_;
      fraction = digits();
      if (!fraction) throw ExpressionError(t.column, "a number needs digits after its '.'");
    }
    if (!whole && !fraction) throw ExpressionError(t.column, "unexpected '.'");
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      const std::size_t mark = pos_;
      ++pos_;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
      if (!digits()) pos_ = mark;  // `2e`: the e is a name after a number, which the parser refuses
    }
    const std::string spelled(text_.substr(start, pos_ - start));
    t.value = std::strtod(spelled.c_str(), nullptr);
    if (!std::isfinite(t.value))
      throw ExpressionError(t.column, "number " + quoted_text(spelled) + " is out of range");
    t.kind = Token::Kind::kNumber;
    t.text = spelled;
    return t;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

class Parser {
 public:
  explicit Parser(std::string_view text) : lexer_(text) { advance(); }

  Node parse() {
    Node root = disjunction(0);
    if (token_.kind != Token::Kind::kEnd)
      throw ExpressionError(token_.column,
                            "unexpected " + describe(token_) + " after the expression");
    return root;
  }

 private:
  void advance() { token_ = lexer_.next(); }
  bool at(std::string_view symbol) const {
    return token_.kind == Token::Kind::kSymbol && token_.text == symbol;
  }
  static std::string describe(const Token& t) {
    switch (t.kind) {
      case Token::Kind::kEnd:
        return "end of expression";
      case Token::Kind::kNumber:
        return "number " + quoted_text(t.text);
      case Token::Kind::kName:
        return "name " + quoted_text(t.text);
      case Token::Kind::kSymbol:
        return quoted_text(t.text);
    }
    return "token";
  }
  void deeper(int depth) const {
    if (depth > kMaxDepth)
      throw ExpressionError(token_.column,
                            "nested deeper than " + std::to_string(kMaxDepth) + " levels", true);
  }
  // Operands are moved in one by one: a braced list would copy them (initializer_list elements
  // are const), which makes a chain a + b + c + ... quadratic in its length.
  template <class... Operands>
  static Node op_node(Op op, int column, Operands&&... operands) {
    Node n;
    n.kind = Node::Kind::kOperator;
    n.op = op;
    n.column = column;
    n.args.reserve(sizeof...(operands));
    (n.args.push_back(std::move(operands)), ...);
    return n;
  }

  // Left-associative levels: `next` parses an operand, `ops` maps a symbol to its operator.
  template <class Next>
  Node left_assoc(int depth, Next next, std::initializer_list<std::pair<const char*, Op>> ops) {
    Node left = (this->*next)(depth);
    for (;;) {
      const auto it =
          std::find_if(ops.begin(), ops.end(), [&](const auto& o) { return at(o.first); });
      if (it == ops.end()) return left;
      const int column = token_.column;
      advance();
      Node right = (this->*next)(depth);
      left = op_node(it->second, column, std::move(left), std::move(right));
    }
  }

  Node disjunction(int depth) { return left_assoc(depth, &Parser::conjunction, {{"||", Op::kOr}}); }
  Node conjunction(int depth) { return left_assoc(depth, &Parser::comparison, {{"&&", Op::kAnd}}); }
  Node comparison(int depth) {
    static constexpr std::pair<const char*, Op> kOps[] = {{"<=", Op::kLe}, {">=", Op::kGe},
                                                          {"==", Op::kEq}, {"!=", Op::kNe},
                                                          {"<", Op::kLt},  {">", Op::kGt}};
    Node left = sum(depth);
    for (const auto& [symbol, op] : kOps) {
      if (!at(symbol)) continue;
      const int column = token_.column;
      advance();
      Node right = sum(depth);
      for (const auto& o : kOps)
        if (at(o.first))
          throw ExpressionError(token_.column, "comparisons do not chain: use && between them");
      return op_node(op, column, std::move(left), std::move(right));
    }
    return left;
  }
  Node sum(int depth) {
    return left_assoc(depth, &Parser::product, {{"+", Op::kAdd}, {"-", Op::kSub}});
  }
  Node product(int depth) {
    return left_assoc(depth, &Parser::unary, {{"*", Op::kMul}, {"/", Op::kDiv}});
  }
  Node unary(int depth) {
    deeper(depth);
    if (at("-") || at("!") || at("+")) {
      const int column = token_.column;
      const bool plus = at("+");
      const Op op = at("-") ? Op::kNeg : Op::kNot;
      advance();
      Node operand = unary(depth + 1);
      return plus ? operand : op_node(op, column, std::move(operand));
    }
    return power(depth);
  }
  Node power(int depth) {
    deeper(depth);
    Node base = primary(depth);
    if (!at("^")) return base;
    const int column = token_.column;
    advance();
    Node exponent = power(depth + 1);
    return op_node(Op::kPow, column, std::move(base), std::move(exponent));
  }
  Node primary(int depth) {
    deeper(depth);
    Node n;
    n.column = token_.column;
    if (token_.kind == Token::Kind::kNumber) {
      n.kind = Node::Kind::kNumber;
      n.value = token_.value;
      advance();
      return n;
    }
    if (at("(")) {
      advance();
      n = disjunction(depth + 1);
      expect(")", "to close the '('");
      return n;
    }
    if (token_.kind != Token::Kind::kName)
      throw ExpressionError(token_.column,
                            "expected a number, a name or '(', got " + describe(token_));
    n.name = token_.text;
    advance();
    if (!at("(")) {
      n.kind = Node::Kind::kName;
      return n;
    }
    advance();
    if (n.name == "Qc") {
      n.kind = Node::Kind::kConstraintForce;
      if (token_.kind != Token::Kind::kName)
        throw ExpressionError(token_.column, "Qc( ) takes the name of a coordinate");
      n.name = token_.text;
      advance();
      expect(")", "to close Qc(");
      return n;
    }
    int arity = 0;
    n.kind = Node::Kind::kCall;
    if (!find_function(n.name, n.op, arity))
      throw ExpressionError(n.column, "unknown function " + quoted_text(n.name));
    if (!at(")")) {
      for (;;) {
        n.args.push_back(disjunction(depth + 1));
        if (!at(",")) break;
        advance();
      }
    }
    if (!at(")")) expect(")", "to close the arguments of " + quoted_text(n.name));
    if (static_cast<int>(n.args.size()) != arity)
      throw ExpressionError(n.column, quoted_text(n.name) + " takes " + std::to_string(arity) +
                                          " argument" + (arity == 1 ? "" : "s") + ", got " +
                                          std::to_string(n.args.size()));
    advance();
    return n;
  }
  void expect(std::string_view symbol, const std::string& why) {
    if (!at(symbol))
      throw ExpressionError(token_.column, "expected '" + std::string(symbol) + "' " + why +
                                               ", got " + describe(token_));
    advance();
  }

  Lexer lexer_;
  Token token_;
};

}  // namespace

std::string quoted_text(std::string_view s) {
  std::string out = "'";
  for (std::size_t i = 0; i < s.size() && i < 32; ++i)
    out += std::isprint(static_cast<unsigned char>(s[i])) ? s[i] : '?';
  return out + (s.size() > 32 ? "...'" : "'");
}

Node parse_expression(std::string_view text) {
  if (text.size() > kMaxExpressionLength)
    throw ExpressionError(0, "longer than " + std::to_string(kMaxExpressionLength) + " characters",
                          true);
  if (text.find_first_not_of(" \t") == std::string_view::npos)
    throw ExpressionError(0, "empty expression");
  return Parser(text).parse();
}

bool find_function(std::string_view name, Op& op, int& arity) {
#define UKES_EXPR_FIND(Name, spelling, n) \
  if (name == spelling) {                 \
    op = Op::k##Name;                     \
    arity = n;                            \
    return true;                          \
  }
  UKES_EXPR_FUNCTIONS(UKES_EXPR_FIND)
#undef UKES_EXPR_FIND
  return false;
}

bool same_tree(const Node& a, const Node& b) {
  if (a.kind != b.kind || a.op != b.op || a.args.size() != b.args.size()) return false;
  if (a.kind == Node::Kind::kNumber && !(a.value == b.value)) return false;
  if (a.name != b.name) return false;
  for (std::size_t k = 0; k < a.args.size(); ++k)
    if (!same_tree(a.args[k], b.args[k])) return false;
  return true;
}

}  // namespace ukes::expr
