// The most common passwords of public breach corpora (lower-cased); refused at sign-up (NIST 800-63B §3.1.1.2).
export const COMMON_PASSWORDS = new Set(
  `123456 123456789 12345678 password qwerty123 qwerty1 111111 12345 secret 123123 1234567890 1234567 000000 qwerty
abc123 password1 iloveyou 11111111 dragon monkey 123321 654321 666666 123qwe 112233 1q2w3e4r 1qaz2wsx qwertyuiop
superman asdfghjkl 987654321 sunshine princess letmein welcome football baseball master shadow michael trustno1
jennifer hunter2 batman passw0rd starwars whatever freedom charlie donald qazwsx 121212 zaq12wsx aa123456 88888888
password123 password12 admin123 welcome1 welcome123 changeme iloveyou1 abcd1234 qwerty12 q1w2e3r4 1q2w3e4r5t
abcdef123 computer internet samsung michelle jordan23 liverpool chelsea arsenal killer pokemon hello123 loveme
flower hottie ashley nicole daniel jessica 1234qwer asdf1234 zxcvbnm zxcvbnm1 asdfasdf 12341234 11223344 99999999
55555555 87654321 12344321 qwer1234 passpass testtest test1234 letmein1 football1 baseball1 princess1 sunshine1
password! p@ssw0rd p@ssword pa55word 1password mypassword secret123 default guest1234 administrator rootroot`.split(
    /\s+/,
  ),
);
