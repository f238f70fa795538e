hyperseal/v1
params chacha20-poly1305 16384
-> argon2id 7YSRq4++MXaNrVuBbcdskA 65536 3 1
Zg8K3l+7aFDvgWKmLN/mqQJvA3kmTjRiNqXcv7jOic8DJLQs4jMfuGKAi+jw/DeI

--- TAtv3GBC1UxNhMCh+fjtoq/PVmtwnEtegsK2nXAOT+Y
èôÑ/5_©–?Ç9úÒÏ–|×Nˆ,žM³JÀÞÍ[~ž‚ò»A½¬“"NÎæ)ijÉ³X„¼ }D÷§#©Ô1b*Êqz·}hj¶ç½qÕ²€)KI»Üúb›Žd‡U¾˜º #«û‹zÜ=Y]§—K2Å¤ÄT2ò€+%B